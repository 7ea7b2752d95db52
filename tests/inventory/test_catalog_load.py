"""load_catalog is idempotent, keeps user edits and matches the published parameter totals."""

from io import StringIO

import pytest
from django.core.management import call_command

from catalog.data import load_gpus, load_models
from inventory import services
from inventory.models import GpuType, Machine, ModelSpec, NetworkInterface, Pool

pytestmark = pytest.mark.django_db

REQUIRED_GPUS = {
    "a100-40g-sxm",
    "a100-80g-sxm",
    "a100-40g-pcie",
    "a100-80g-pcie",
    "a800-80g-sxm",
    "h100-sxm",
    "h100-pcie",
    "h800-sxm",
    "h20",
    "h200-sxm",
    "b200",
    "l40s",
    "l20",
    "l4",
    "a10",
    "a6000",
    "rtx-4090",
    "rtx-3090",
}
REQUIRED_MODELS = {
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "llama-3.3-70b",
    "deepseek-r1-distill-llama-70b",
    "deepseek-r1-distill-qwen-32b",
    "qwen2.5-7b",
    "qwen2.5-32b",
    "qwen2.5-72b",
    "qwen3-8b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-235b-a22b",
    "mixtral-8x7b",
    "mistral-7b",
    "deepseek-v3",
    "deepseek-r1",
}


def run(command: str) -> str:
    out = StringIO()
    call_command(command, stdout=out)
    return out.getvalue()


def test_load_catalog_seeds_every_required_gpu_and_model_with_a_source():
    run("load_catalog")

    assert set(GpuType.objects.values_list("slug", flat=True)) >= REQUIRED_GPUS
    assert set(ModelSpec.objects.values_list("slug", flat=True)) >= REQUIRED_MODELS
    assert not GpuType.objects.filter(source="").exists()
    assert not ModelSpec.objects.filter(source="").exists()
    a800 = GpuType.objects.get(slug="a800-80g-sxm")
    assert a800.nvlink_bandwidth_gbs == 400
    assert GpuType.objects.get(slug="l40s").nvlink_bandwidth_gbs == 0


def test_every_catalog_source_fits_its_inventory_field():
    # A longer datasheet note fails load_catalog, and with it every test and `make run`.
    longest = GpuType._meta.get_field("source").max_length
    assert all(len(g.source) <= longest for g in load_gpus().values())
    longest = ModelSpec._meta.get_field("source").max_length
    assert all(len(m.source) <= longest for m in load_models().values())


def test_load_catalog_twice_changes_nothing():
    run("load_catalog")
    history_rows = ModelSpec.history.count() + GpuType.history.count()

    out = run("load_catalog")

    assert "0 created, 0 updated" in out
    assert GpuType.objects.count() == len(load_gpus())
    assert ModelSpec.objects.count() == len(load_models())
    assert ModelSpec.history.count() + GpuType.history.count() == history_rows


def test_load_catalog_keeps_user_edits():
    run("load_catalog")
    spec = ModelSpec.objects.get(slug="qwen3-8b")
    services.model_spec_update(model_spec=spec, max_position_embeddings=32768, notes="ours")
    gpu = GpuType.objects.get(slug="l20")
    services.gpu_type_update(gpu_type=gpu, hbm_bandwidth_gbs=800)

    out = run("load_catalog")

    assert "1 kept (edited by a user)" in out
    spec.refresh_from_db()
    gpu.refresh_from_db()
    assert (spec.max_position_embeddings, spec.notes) == (32768, "ours")
    assert gpu.hbm_bandwidth_gbs == 800


def test_load_catalog_repairs_unedited_rows():
    run("load_catalog")
    ModelSpec.objects.filter(slug="llama-3.1-8b").update(num_layers=1, total_params=1)

    run("load_catalog")

    spec = ModelSpec.objects.get(slug="llama-3.1-8b")
    assert spec.num_layers == 32
    assert spec.total_params > 8_000_000_000


@pytest.mark.parametrize("slug", sorted(REQUIRED_MODELS))
def test_seeded_parameter_totals_match_published_figures_within_one_percent(catalog_loaded, slug):
    spec = ModelSpec.objects.get(slug=slug)

    assert spec.published_total_params
    assert spec.total_params == pytest.approx(spec.published_total_params, rel=0.01)


@pytest.mark.parametrize(
    ("slug", "active_b"),
    [("qwen3-30b-a3b", 3.3), ("qwen3-235b-a22b", 22), ("mixtral-8x7b", 12.9), ("deepseek-v3", 37)],
)
def test_moe_active_parameters_match_published_figures(catalog_loaded, slug, active_b):
    spec = ModelSpec.objects.get(slug=slug)

    assert spec.active_params / 1e9 == pytest.approx(active_b, rel=0.03)


def test_seeded_specs_keep_their_config_and_explicit_head_dim(catalog_loaded):
    qwen3 = ModelSpec.objects.get(slug="qwen3-32b")
    deepseek = ModelSpec.objects.get(slug="deepseek-v3")

    assert qwen3.head_dim == 128 != qwen3.hidden_size // qwen3.num_attention_heads
    assert qwen3.config_json["model_type"] == "qwen3"
    assert deepseek.is_mla
    assert deepseek.is_moe
    assert (deepseek.kv_lora_rank, deepseek.qk_rope_head_dim) == (512, 64)
    assert deepseek.checkpoint_quantization == "fp8"


def test_load_demo_builds_the_demo_fleet_once():
    out = run("load_demo")
    run("load_demo")

    assert "5 machines created" in out
    assert Machine.objects.count() == 5
    assert Pool.objects.count() == 3
    a800 = Machine.objects.filter(gpu_type__slug="a800-80g-sxm")
    assert [(m.gpu_count, m.interconnect) for m in a800] == [(8, "nvlink")] * 2
    a100 = Machine.objects.filter(gpu_type__slug="a100-80g-sxm")
    assert [m.gpu_count for m in a100] == [4, 4]
    small = Machine.objects.get(gpu_count=1)
    assert small.gpu_type.memory_gib == 24
    for machine in list(a800) + list(a100):
        data = machine.nics.get(role="data")
        assert data.speed_gbps == 25
        assert data.name in {"eth1", "ens3"}
        assert machine.nics.filter(role="management").exists()
    assert NetworkInterface.objects.filter(role="data").count() == 5


def test_rows_created_by_a_user_are_never_overwritten_by_the_catalog():
    services.gpu_type_create(
        slug="l4",
        name="Our L4",
        memory_gib=24,
        hbm_bandwidth_gbs=250,
        bf16_dense_tflops=100,
        form_factor="pcie",
    )

    run("load_catalog")

    assert GpuType.objects.get(slug="l4").name == "Our L4"
