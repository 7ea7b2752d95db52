"""Planner pages: permissions, the wizard without JavaScript, validation, lists, exports."""

import io
import zipfile

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import NoReverseMatch, reverse

from planner.models import Plan
from planner.presentation.bands import basis_text
from planner.selectors import plan_result
from planner.services import plan_create

WIZARD = "/plans/new/{}/"


@pytest.fixture
def s1_plan(demo_fleet, planner, s1_spec):
    return plan_create(spec=s1_spec, actor=planner)


# ------------------------------------------------------------------ permissions


def test_anonymous_is_sent_to_login(client, s1_plan):
    for url in ("/plans/", s1_plan.get_absolute_url(), WIZARD.format("model")):
        response = client.get(url)
        assert response.status_code == 302
        assert "/accounts/login/" in response["Location"]


def test_viewer_reads_plans(viewer_client, s1_plan):
    pid = s1_plan.public_id
    for url in (
        "/plans/",
        f"/plans/{pid}/",
        f"/plans/{pid}/export.md",
        f"/plans/{pid}/export.json",
        f"/plans/{pid}/export.zip",
        f"/plans/{pid}/what-if/?weight_dtype=fp8",
        f"/plans/compare/?a={pid}&b={pid}",
        "/plans/rules/",
    ):
        assert viewer_client.get(url).status_code == 200, url


def test_viewer_cannot_create_or_rerun(viewer_client, s1_plan):
    assert viewer_client.get(WIZARD.format("model")).status_code == 403
    assert viewer_client.post(WIZARD.format("operations"), {"action": "finish"}).status_code == 403
    assert viewer_client.post(f"/plans/{s1_plan.public_id}/rerun/").status_code == 403
    what_if = viewer_client.post(f"/plans/{s1_plan.public_id}/what-if/", {"weight_dtype": "fp8"})
    assert what_if.status_code == 403
    assert Plan.objects.count() == 1


def test_viewer_sees_no_write_buttons(viewer_client, s1_plan):
    page = viewer_client.get(s1_plan.get_absolute_url()).content.decode()
    assert "Re-run with the current engine" not in page
    assert "Plan a deployment" not in viewer_client.get("/plans/").content.decode()


# ------------------------------------------------------------------ wizard


def _post(client, step, data, action="next"):
    return client.post(WIZARD.format(step), {**data, "action": action})


def test_wizard_end_to_end_without_javascript(demo_fleet, planner_client, planner):
    assert planner_client.get("/plans/new/?reset=1").status_code == 302
    r = _post(planner_client, "model", {"source": "catalog", "model": "llama-3.1-70b"})
    assert r["Location"] == WIZARD.format("precision")
    r = _post(
        planner_client,
        "precision",
        {
            "weight_dtype": "int8",
            "pre_quantized": "on",
            "kv_cache_dtype": "auto",
            "max_model_len": "8192",
            "gpu_memory_utilization": "0.9",
        },
    )
    assert r["Location"] == WIZARD.format("load")
    r = _post(
        planner_client,
        "load",
        {
            "concurrency": "32",
            "avg_input_tokens": "1024",
            "avg_output_tokens": "256",
            "traffic_shape": "steady",
        },
    )
    assert r["Location"] == WIZARD.format("machines")
    r = _post(planner_client, "machines", {"source": "pool", "pool": "a800-pool"})
    assert r["Location"] == WIZARD.format("operations")
    r = _post(planner_client, "operations", {"gateway_available": "on"}, action="finish")

    plan = Plan.objects.get()
    assert r["Location"] == plan.get_absolute_url()
    assert plan.author == planner
    assert plan.route == "A"
    assert plan.hostnames == ["a800-01", "a800-02"]
    assert plan.spec["operations"]["gateway_available"] is True
    assert plan.spec["hardware"] == {"pool": "a800-pool"}
    page = planner_client.get(r["Location"]).content.decode()
    assert "Route A" in page
    for chart in ("chart-memory", "chart-throughput", "chart-communication", "chart-kv"):
        assert f'id="{chart}"' in page
        assert f'id="{chart}-data"' in page
    assert "<script>" not in page  # CSP: data only through json_script


def test_back_and_forward_keep_the_answers(demo_fleet, planner_client):
    _post(planner_client, "load", {"concurrency": "77", "avg_input_tokens": "9"}, action="back")
    page = planner_client.get(WIZARD.format("load")).content.decode()
    assert 'value="77"' in page
    assert 'value="9"' in page
    # Jumping with the step navigation keeps them too.
    _post(planner_client, "load", {"concurrency": "78"}, action="goto:model")
    assert 'value="78"' in planner_client.get(WIZARD.format("load")).content.decode()


@pytest.mark.parametrize(
    ("step", "data", "field", "message"),
    [
        pytest.param(
            "precision",
            {"max_model_len": "8192", "gpu_memory_utilization": "1.5"},
            "gpu_memory_utilization",
            "above 0 and at most 1",
            id="utilization-above-1",
        ),
        pytest.param(
            "precision",
            {"max_model_len": "999999", "gpu_memory_utilization": "0.9"},
            "max_model_len",
            "between 16 and 32768",
            id="context-above-model-limit",
        ),
        pytest.param(
            "load",
            {"concurrency": "0", "avg_input_tokens": "1", "avg_output_tokens": "1"},
            "concurrency",
            "between 1 and 1000000",
            id="zero-concurrency",
        ),
        pytest.param(
            "machines",
            {"source": "machines"},
            "machines",
            "Tick at least one machine",
            id="no-machine",
        ),
        pytest.param(
            "machines",
            {
                "source": "hypothetical",
                "node_count": "2",
                "gpus_per_node": "0",
                "gpu": "l4",
                "inter_node_gbps": "25",
            },
            "gpus_per_node",
            "between 1 and 64",
            id="zero-gpus",
        ),
        pytest.param(
            "model",
            {"source": "paste", "config_json": "{oops"},
            "config_json",
            "not valid JSON",
            id="bad-json",
        ),
        pytest.param(
            "model",
            {"source": "paste", "config_json": '{"model_type": "llama"}'},
            "config_json",
            "hidden_size",
            id="config-missing-keys",
        ),
    ],
)
def test_wizard_validation_message_next_to_the_field(
    demo_fleet, planner_client, step, data, field, message
):
    _post(planner_client, "model", {"source": "catalog", "model": "qwen2.5-32b"})
    base = {"weight_dtype": "bf16", "kv_cache_dtype": "auto", "traffic_shape": "steady"}

    response = _post(planner_client, step, {**base, **data})

    assert response.status_code == 200  # re-rendered, not redirected
    form = response.context["form"]
    assert message in " ".join(form.errors[field])
    page = response.content.decode()
    assert f'id="id_{field}_error"' in page or 'id="machines-errors"' in page
    assert message in page


def test_engine_errors_land_on_their_step(demo_fleet, planner_client):
    _post(planner_client, "model", {"source": "catalog", "model": "qwen2.5-32b"})
    response = _post(planner_client, "operations", {"pinned_tp": "3"}, action="finish")

    assert response["Location"] == WIZARD.format("operations")
    page = planner_client.get(response["Location"]).content.decode()
    assert "must divide the 40 attention heads" in page
    assert not Plan.objects.exists()


def _preview(client, step: str, answers: dict):
    return client.post(reverse("planner:wizard-preview", kwargs={"step": step}), answers)


def test_preview_returns_the_live_side_panel(demo_fleet, planner_client):
    response = _preview(
        planner_client, "machines", {"source": "machines", "machines": ["a100-01", "a100-02"]}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Weights per GPU" in html
    assert "KV capacity at your context" in html
    assert 'data-testid="fits"' in html
    # The memory bar splits what vLLM may use: its parts add up to the usable memory.
    memory = response.context["memory"]
    parts_gib = sum(bar["gib"] for bar in response.context["bars"])
    assert parts_gib == pytest.approx(memory.requested_gib, rel=1e-3)
    # and the answers were kept in the draft
    page = planner_client.get(WIZARD.format("machines")).content.decode()
    assert 'value="a100-01" id="machine-1" checked' in page
    assert 'value="a100-02" id="machine-2" checked' in page


def test_preview_says_when_the_layout_fits_but_not_the_load(demo_fleet, planner_client):
    _preview(planner_client, "machines", {"source": "machines", "machines": ["a100-01"]})
    load = {
        "concurrency": "5000",
        "avg_input_tokens": "4096",
        "avg_output_tokens": "1024",
        "traffic_shape": "steady",
    }
    response = _preview(planner_client, "load", load)

    assert response.context["invalid_steps"] == []
    best = response.context["best"]
    assert best.fits
    assert not best.serves_load
    html = response.content.decode()
    assert 'data-testid="fits-not-load"' in html
    assert 'data-testid="fits"' not in html


def test_preview_says_when_nothing_fits_the_machines(demo_fleet, planner_client):
    one_l4 = {
        "source": "hypothetical",
        "node_count": "1",
        "gpus_per_node": "1",
        "gpu": "l4",
        "inter_node_gbps": "25",
    }
    response = _preview(planner_client, "machines", one_l4)

    assert response.status_code == 200
    assert response.context["errors"] == {}
    assert not response.context["best"].fits
    html = response.content.decode()
    assert "Does not fit yet" in html
    assert "Estimated speed" not in html  # no figures for a layout that cannot start


def test_operations_step_asks_every_ray_question_with_why(demo_fleet, planner_client):
    response = planner_client.get(WIZARD.format("operations"))
    page = response.content.decode()
    assert page.count('class="why"') == 7
    assert "Will several models share this pool of GPUs?" in page


def test_wizard_defaults_come_from_the_catalog_and_inventory(demo_fleet, planner_client):
    planner_client.get("/plans/new/?reset=1")
    model_page = planner_client.get(WIZARD.format("model")).content.decode()
    assert 'value="qwen2.5-32b" selected' in model_page
    machines_page = planner_client.get(WIZARD.format("machines")).content.decode()
    for host in ("a800-01", "a100-02", "ws-4090"):
        assert host in machines_page
    assert "25 Gb/s" in machines_page
    assert 'value="fleet" ' in machines_page


# ------------------------------------------------------------------ saved plans


def test_plan_list_query_count_is_constant(demo_fleet, viewer_client, planner, s1_spec):
    plan_create(spec=s1_spec, actor=planner)
    with CaptureQueriesContext(connection) as one:
        assert viewer_client.get("/plans/").status_code == 200
    for _ in range(6):
        plan_create(spec=s1_spec, actor=planner)
    with CaptureQueriesContext(connection) as many:
        assert viewer_client.get("/plans/").status_code == 200
    assert len(many) == len(one)
    assert len(many) <= 8


def test_plan_list_filters(demo_fleet, viewer_client, planner, s1_spec, s2a_spec):
    s1 = plan_create(spec=s1_spec, actor=planner)
    s2a = plan_create(spec=s2a_spec, actor=planner)
    page = viewer_client.get("/plans/", {"machine": "a100-01"}).content.decode()
    assert s2a.get_absolute_url() in page
    assert s1.get_absolute_url() not in page
    page = viewer_client.get("/plans/", {"model": "llama-3.1-70b", "route": "A"}).content.decode()
    assert s1.get_absolute_url() in page
    assert s2a.get_absolute_url() not in page


def test_result_page_shows_reasons_with_rules_and_configs(viewer_client, s1_plan):
    page = viewer_client.get(s1_plan.get_absolute_url()).content.decode()
    assert 'href="/plans/rules/#rule-3-route-a"' in page
    assert "Risks and pitfalls" in page
    assert "Placement check" in page
    assert "NCCL_SOCKET_IFNAME=eth1" in page
    assert 'data-copy-target="cfg-0"' in page
    assert f"/plans/{s1_plan.public_id}/export.zip" in page


def test_decision_button_only_when_the_url_exists(planner_client, s1_plan):
    page = planner_client.get(s1_plan.get_absolute_url()).content.decode()
    try:
        url = reverse("decisions:create-from-plan", kwargs={"public_id": s1_plan.public_id})
    except NoReverseMatch:
        assert "Record this decision" not in page
    else:
        assert url in page


def test_what_if_shows_both_results_and_saves_on_request(planner_client, s1_plan):
    pid = s1_plan.public_id
    response = planner_client.get(f"/plans/{pid}/what-if/", {"link": "ib400"})
    assert response.status_code == 200
    comparison = response.context["comparison"]
    assert comparison.changed_count >= 1
    assert "400 Gb InfiniBand" in response.content.decode()
    assert 'class="changed"' in response.content.decode()

    saved = planner_client.post(f"/plans/{pid}/what-if/", {"link": "ib400"})
    new = Plan.objects.exclude(pk=s1_plan.pk).get()
    assert saved["Location"] == new.get_absolute_url()
    assert new.spec["hardware"]["link_override"]["kind"] == "infiniband"


def test_what_if_needs_a_change(planner_client, s1_plan):
    response = planner_client.get(f"/plans/{s1_plan.public_id}/what-if/")
    assert response.status_code == 400
    page = response.content.decode()
    assert "Change at least one answer" in page
    # The refused what-if shows the whole plan page again, candidate bundles included.
    assert 'data-testid="candidate-bundle-form"' in page


def test_rerun_creates_a_new_plan_and_compares(planner_client, s1_plan):
    response = planner_client.post(f"/plans/{s1_plan.public_id}/rerun/")
    new = Plan.objects.exclude(pk=s1_plan.pk).get()
    assert new.rerun_of == s1_plan
    assert response["Location"] == f"/plans/compare/?a={s1_plan.public_id}&b={new.public_id}"
    page = planner_client.get(response["Location"])
    assert page.status_code == 200
    assert page.context["comparison"].changed_count == 0  # same engine, same inventory


def test_compare_from_the_list_checkboxes(viewer_client, s1_plan, planner, s2a_spec):
    other = plan_create(spec=s2a_spec, actor=planner)
    response = viewer_client.get(
        "/plans/compare/", {"plan": [str(s1_plan.public_id), str(other.public_id)]}
    )
    assert response.status_code == 200
    assert response.context["comparison"].changed_count > 0
    bad = viewer_client.get("/plans/compare/", {"plan": ["nope"]})
    assert bad.status_code == 302


def test_exports(viewer_client, s1_plan):
    pid = s1_plan.public_id
    md = viewer_client.get(f"/plans/{pid}/export.md")
    assert md["Content-Type"].startswith("text/markdown")
    assert "## Recommendation" in md.content.decode()
    # The serving predictions with their ± bands and where the bands come from.
    assert "## Predicted serving under your load" in md.content.decode()
    best = plan_result(s1_plan).best
    assert f"| {best.label} | " in md.content.decode()
    assert basis_text(best.serving, best.gpu) in md.content.decode()
    js = viewer_client.get(f"/plans/{pid}/export.json")
    assert js.json()["engine_version"] == s1_plan.engine_version
    # The JSON export (and the API) carry the bands as numbers, their runs and regime.
    serving = js.json()["result"]["candidates"][0]["serving"]
    assert serving["output_low_tok_s"] < serving["output_tok_s"] < serving["output_high_tok_s"]
    assert serving["band_regime"] == best.serving.band_regime != ""
    archive = zipfile.ZipFile(io.BytesIO(viewer_client.get(f"/plans/{pid}/export.zip").content))
    names = {n.split("/", 1)[1] for n in archive.namelist()}
    assert {"README.md", "nginx.conf", ".env", "launch-a800-01.sh", "launch-a800-02.sh"} <= names
    info = archive.getinfo("serveplan-configs/launch-a800-01.sh")
    assert info.external_attr >> 16 & 0o111  # executable
    assert viewer_client.get(f"/plans/{pid}/export.exe").status_code == 404


def test_pasted_config_json_is_planned(demo_fleet, planner_client):
    import json

    from catalog.data import load_models

    config = dict(load_models()["qwen3-8b"].config)
    r = _post(
        planner_client,
        "model",
        {"source": "paste", "config_json": json.dumps(config), "name": "my-org/qwen3-8b-ft"},
    )
    assert r["Location"] == WIZARD.format("precision")
    _post(planner_client, "machines", {"source": "machines", "machines": ["ws-4090"]})
    r = _post(planner_client, "operations", {}, action="finish")
    plan = Plan.objects.get()
    assert r["Location"] == plan.get_absolute_url()
    assert plan.spec["model"]["name"] == "my-org/qwen3-8b-ft"
    assert plan.route == "single"


def test_yarn_extends_the_context_limit(demo_fleet, planner_client):
    _post(planner_client, "model", {"source": "catalog", "model": "qwen2.5-72b"})
    data = {
        "weight_dtype": "bf16",
        "kv_cache_dtype": "auto",
        "max_model_len": "65536",
        "gpu_memory_utilization": "0.9",
    }
    refused = _post(planner_client, "precision", data)
    assert "extend the context with YaRN" in refused.content.decode()
    accepted = _post(planner_client, "precision", {**data, "rope_scaling_factor": "4"})
    assert accepted["Location"] == WIZARD.format("load")


def test_hypothetical_machines_and_a_pinned_layout(demo_fleet, planner_client):
    _post(planner_client, "model", {"source": "catalog", "model": "qwen2.5-72b"})
    _post(
        planner_client,
        "machines",
        {
            "source": "hypothetical",
            "node_count": "2",
            "gpus_per_node": "4",
            "gpu": "a100-80g-sxm",
            "intra_link": "nvlink",
            "inter_node_gbps": "25",
            "inter_node_kind": "ethernet",
            "pool_kind": "shared",
        },
    )
    r = _post(
        planner_client,
        "operations",
        {"pinned_tp": "4", "pinned_pp": "2", "multi_model_pool": "on"},
        action="finish",
    )
    plan = Plan.objects.get()
    assert r["Location"] == plan.get_absolute_url()
    assert plan.spec["hardware"]["node_count"] == 2
    assert plan.spec["pinned_layout"] == {"tp": 4, "pp": 2, "replicas": 1}
    assert plan.pool_kind == "shared"
    page = planner_client.get(plan.get_absolute_url()).content.decode()
    assert "yours" in page  # the pinned layout is in the table


def test_what_if_context_8k_to_64k_with_yarn(planner_client, demo_fleet, planner, s2a_spec):
    plan = plan_create(spec={**s2a_spec, "model": "qwen2.5-72b"}, actor=planner)
    refused = planner_client.get(f"/plans/{plan.public_id}/what-if/", {"max_model_len": 65536})
    assert refused.status_code == 400
    assert "rope_scaling_factor" in refused.content.decode()
    response = planner_client.get(
        f"/plans/{plan.public_id}/what-if/", {"max_model_len": 65536, "rope_scaling_factor": "4"}
    )
    assert response.status_code == 200
    rows = {r.key: r for r in response.context["comparison"].figures}
    assert rows["max_concurrency_total"].changed
