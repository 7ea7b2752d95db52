"""Planner services: resolving specs against the inventory, snapshots, re-runs, comparisons."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.architecture import architecture_values
from inventory.models import Machine, ModelSpec
from inventory.selectors import model_spec_architecture
from planner.engine.spec import SpecError, spec_from_dict
from planner.models import Plan, PlanIsImmutable
from planner.selectors import plan_result
from planner.services import (
    compare_plans,
    plan_create,
    plan_evaluate,
    plan_rerun,
    resolve_spec,
)
from tests.planner.fleet import A100_HOSTS, A800_HOSTS


def test_resolve_the_whole_demo_fleet(demo_fleet):
    resolved = resolve_spec({"model": "qwen2.5-32b", "hardware": {"fleet": True}})

    nodes = resolved.engine_input["hardware"]["nodes"]
    assert [n["hostname"] for n in nodes] == sorted([*A100_HOSTS, *A800_HOSTS, "ws-4090"])
    a800 = next(n for n in nodes if n["hostname"] == "a800-01")
    assert a800["gpu_count"] == 8
    assert a800["gpu"]["slug"] == "a800-80g-sxm"
    assert a800["gpu"]["nvlink_gbs"] == 400  # A800 NVLink is capped
    assert a800["intra_link"] == "nvlink"
    data = [nic for nic in a800["nics"] if nic["role"] == "data"]
    assert data == [{"name": "eth1", "speed_gbps": 25.0, "kind": "ethernet", "role": "data"}]
    assert resolved.pool_kind == "dedicated"
    assert resolved.model_slug == "qwen2.5-32b"
    spec_from_dict(resolved.engine_input)  # the engine accepts it


def test_resolve_a_pool_and_hostnames(demo_fleet):
    by_pool = resolve_spec({"model": "qwen2.5-32b", "hardware": {"pool": "a100-pool"}})
    assert by_pool.hostnames == list(A100_HOSTS)
    by_host = resolve_spec(
        {
            "model": "qwen2.5-32b",
            "hardware": {
                "hostnames": ["A800-02", "a800-01"],
                "pool_kind": "shared",
                "free_gpus": {"a800-01": 4},
            },
        }
    )
    assert by_host.hostnames == ["a800-02", "a800-01"]
    assert by_host.pool_kind == "shared"
    assert by_host.engine_input["hardware"]["nodes"][1]["free_gpus"] == 4


def test_unknown_slug_and_hostname_are_field_errors(demo_fleet):
    with pytest.raises(SpecError) as info:
        resolve_spec({"model": "nope", "hardware": {"hostnames": ["a100-01", "ghost"]}})
    assert set(info.value.errors) == {"model.slug", "hardware.hostnames"}
    assert "ghost" in info.value.errors["hardware.hostnames"]


def test_inventory_model_spec_wins_over_the_catalog(demo_fleet):
    row = ModelSpec.objects.get(slug="qwen2.5-32b")
    row.max_position_embeddings = 65536
    row.user_modified = True
    row.save()

    resolved = resolve_spec({"model": "qwen2.5-32b", "hardware": {"fleet": True}})

    assert resolved.engine_input["model"]["architecture"]["max_position_embeddings"] == 65536
    assert spec_from_dict({**resolved.engine_input, "max_model_len": 65536}).max_model_len == 65536


def test_an_inventory_model_reaches_the_engine_as_its_architecture(demo_fleet):
    row = ModelSpec.objects.get(slug="llama-3.1-70b")
    assert row.config_json  # the catalog's config.json is stored beside the columns

    model = resolve_spec({"model": row.slug, "hardware": {"fleet": True}}).engine_input["model"]

    assert "hf_config" not in model  # no config.json goes to the engine, made up or stored
    hardware = {"node_count": 1, "gpus_per_node": 8, "gpu": "h100-sxm"}
    engine_arch = spec_from_dict({"model": model, "hardware": hardware}).architecture
    assert engine_arch == model_spec_architecture(row)


def test_inventory_only_model(demo_fleet):
    row = ModelSpec.objects.get(slug="qwen3-8b")
    row.pk = None
    row.slug = "our-qwen3-8b-finetune"
    row.save()
    evaluation = plan_evaluate(
        spec={"model": "our-qwen3-8b-finetune", "hardware": {"hostnames": ["ws-4090"]}}
    )
    assert evaluation.resolved.model_slug == "our-qwen3-8b-finetune"
    assert evaluation.result.recommendation.route == "single"


def _engine_columns(slug: str) -> tuple[dict, object]:
    """Return the engine's architecture of a model spec as column values, and its quantization."""
    resolved = resolve_spec({"model": slug, "hardware": {"hostnames": ["ws-4090"]}})
    arch = spec_from_dict(resolved.engine_input).architecture
    return architecture_values(arch), arch.quantization


@pytest.mark.parametrize("slug", ["qwen3-30b-a3b", "deepseek-v3", "mixtral-8x7b", "llama-3.1-8b"])
def test_the_engine_reads_a_model_spec_without_config_json_exactly(demo_fleet, slug):
    row = ModelSpec.objects.get(slug=slug)
    with_config, quantization = _engine_columns(slug)
    row.config_json = {}
    row.save()

    columns, declared = _engine_columns(slug)

    assert columns == with_config == architecture_values(model_spec_architecture(row))
    # A pre-quantized checkpoint is sized as its declared quantization either way.
    assert (declared is None) == (quantization is None) == (not row.checkpoint_quantization)
    if declared is not None:
        assert declared.bytes_per_param == quantization.bytes_per_param


@pytest.mark.parametrize(
    ("model_type", "checkpoint"),
    [("qwen2_moe", ""), ("gpt_oss", "mxfp4"), ("llama4_text", ""), ("olmoe", "")],
)
def test_a_typed_in_moe_model_of_any_type_keeps_its_experts(demo_fleet, model_type, checkpoint):
    """A model spec entered column by column (no config.json) reaches the engine as its columns:
    no config.json is made up for it, which other model types would read without experts."""
    row = ModelSpec.objects.get(slug="qwen3-30b-a3b")
    row.pk, row.slug, row.model_type, row.config_json = None, f"our-{model_type}", model_type, {}
    row.checkpoint_quantization = checkpoint
    row.save()

    columns, quantization = _engine_columns(row.slug)

    assert columns == architecture_values(model_spec_architecture(row))
    assert columns["num_experts"] == row.num_experts > 0
    assert (quantization.method if quantization else "") == checkpoint


def test_fetch_then_compute_few_queries(demo_fleet, s1_spec):
    with CaptureQueriesContext(connection) as queries:
        plan_evaluate(spec={**s1_spec, "hardware": {"fleet": True}})
    # model spec, machines + NICs (select_related GPU type and pool): nothing per machine.
    assert len(queries) <= 4


def test_query_count_does_not_grow_with_the_fleet(demo_fleet, s1_spec):
    with CaptureQueriesContext(connection) as few:
        plan_evaluate(spec={**s1_spec, "hardware": {"fleet": True}})
    template = Machine.objects.get(hostname="a100-01")
    for i in range(10):
        from inventory.services import machine_create

        machine_create(
            hostname=f"extra-{i}",
            gpu_type=template.gpu_type,
            gpu_count=4,
            interconnect="nvlink",
            nics=[{"name": "eth1", "speed_gbps": 25, "role": "data"}],
        )
    with CaptureQueriesContext(connection) as many:
        plan_evaluate(spec={**s1_spec, "hardware": {"fleet": True}})
    assert len(many) == len(few)


def test_plan_is_an_immutable_snapshot(demo_fleet, planner, s2a_spec):
    plan = plan_create(spec=s2a_spec, actor=planner)

    assert plan.engine_version
    assert plan.spec == s2a_spec
    assert plan.engine_input["hardware"]["nodes"][0]["hostname"] == "a100-01"
    rec = plan_result(plan).recommendation
    assert (plan.tp, plan.pp, plan.replicas) == (rec.tp, rec.pp, rec.replicas)
    plan.title = "changed"
    with pytest.raises(PlanIsImmutable):
        plan.save()


def test_rerun_resolves_the_inventory_again(demo_fleet, planner, s2a_spec):
    plan = plan_create(spec=s2a_spec, actor=planner)
    Machine.objects.filter(hostname="a100-02").update(status="maintenance")

    new = plan_rerun(plan=plan, actor=planner)

    assert new.rerun_of == plan
    assert new.title == plan.title
    assert Plan.objects.count() == 2
    assert new.hostnames == ["a100-01"]
    diff = compare_plans(plan, new)
    assert diff.changed_count > 0
    assert plan.hostnames == ["a100-01", "a100-02"]  # the snapshot did not move


def test_compare_highlights_what_changed(demo_fleet, planner, s1_spec, s2a_spec):
    a = plan_create(spec=s1_spec, actor=planner)
    b = plan_create(spec=s2a_spec, actor=planner)
    diff = compare_plans(a, b)
    changed = {row.key for row in diff.recommendation + diff.figures if row.changed}
    assert "weight_dtype" in changed
    assert "memory.weights_gib" in changed
    spec_changed = {row.key for row in diff.spec if row.changed}
    assert {"model", "weight_dtype"} <= spec_changed
    assert compare_plans(a, a).changed_count == 0


def test_s1_on_the_real_demo_fleet_uses_the_dedicated_a800s(db, planner, monkeypatch):
    """`make run`'s demo fleet: A800s in a dedicated pool beside shared A100s."""
    from inventory.demo import load_demo
    from inventory.services import catalog_load
    from planner.engine import plan as engine_plan
    from planner.services import plans as plan_services

    catalog_load()
    load_demo()
    runs = []
    monkeypatch.setattr(
        plan_services, "run_engine", lambda *args: runs.append(args) or engine_plan(*args)
    )
    spec = {
        "model": "llama-3.1-70b",
        "weight_dtype": "int8",
        "max_model_len": 8192,
        "workload": {"concurrency": 32},
        "hardware": {"fleet": True},
    }

    plan = plan_create(spec=spec, actor=planner)

    assert plan.route == "A"
    assert plan.pool_kind == "dedicated"  # the chosen machines' pool, not the shared A100s
    assert plan.hostnames == ["a800-node-1", "a800-node-2"]
    assert plan.executor_backend == "mp"
    assert len(runs) == 1  # the engine plans with the chosen machines' pool kind in one run
    assert plan.engine_input["hardware"]["pool_kind"] == "dedicated"
    # The stored input gives the same plan again (bundles are rebuilt from it).
    again = engine_plan(spec_from_dict(plan.engine_input))
    assert again.recommendation == plan_result(plan).recommendation

    shared = plan_evaluate(
        spec={
            **spec,
            "model": "qwen2.5-32b",
            "weight_dtype": "bf16",
            "hardware": {"pool": "a100-shared"},
        }
    )
    assert shared.resolved.pool_kind == "shared"
    assert shared.result.placement.required is True


def test_a_model_spec_used_by_a_saved_plan_cannot_be_deleted(demo_fleet, planner, s1_spec):
    from inventory.selectors import model_spec_get, object_usages
    from planner.services import plan_create

    plan = plan_create(spec=s1_spec, actor=planner, title="S1 for the usage check")

    usages = object_usages(model_spec_get(slug=plan.model_slug))

    assert f"plan: {plan.title}" in usages
