"""Issue 15 item 9: plan evaluation is throttled per user and specs are capped in size, so a
viewer cannot burn CPU-seconds at will."""

import pytest
from django.test import override_settings

from planner.engine.spec import MAX_NODES

pytestmark = pytest.mark.django_db

INLINE = {
    "model": "qwen2.5-7b",
    "weight_dtype": "bf16",
    "max_model_len": 4096,
    "workload": {"concurrency": 8, "avg_input_tokens": 512, "avg_output_tokens": 128},
}


def _hardware(node_count: int) -> dict:
    return {"node_count": node_count, "gpus_per_node": 8, "gpu": "a100-80g-sxm"}


def test_a_node_count_of_100000_is_refused_naming_the_field(viewer_api):
    spec = {**INLINE, "hardware": _hardware(100_000)}

    response = viewer_api.post("/api/v1/plans/evaluate/", spec, format="json")

    assert response.status_code == 400
    assert f"between 1 and {MAX_NODES}" in response.json()["hardware.node_count"][0]


def test_an_inline_node_list_longer_than_the_cap_is_refused(viewer_api):
    node = {"gpu": "a100-80g-sxm", "gpu_count": 8, "nics": [{"speed_gbps": 25}]}
    spec = {**INLINE, "hardware": {"nodes": [node] * (MAX_NODES + 1)}}

    response = viewer_api.post("/api/v1/plans/evaluate/", spec, format="json")

    assert response.status_code == 400
    assert "hardware.nodes" in response.json()


@override_settings(PLAN_EVALUATION_RATE="3/min")
def test_plan_evaluation_is_throttled_per_user(viewer_api, planner_api):
    spec = {**INLINE, "hardware": _hardware(1)}

    codes = [
        viewer_api.post("/api/v1/plans/evaluate/", spec, format="json").status_code
        for _ in range(4)
    ]
    other = planner_api.post("/api/v1/plans/", {"spec": spec}, format="json")

    assert codes == [200, 200, 200, 429]
    assert other.status_code == 201


@override_settings(PLAN_EVALUATION_RATE="2/min")
def test_the_what_if_page_shares_the_limit(viewer_client, planner):
    from planner.services import plan_create
    from tests.planner.conftest import S1_SPEC
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    plan = plan_create(spec=S1_SPEC, actor=planner, title="S1")
    url = f"/plans/{plan.public_id}/what-if/?concurrency=64"

    codes = [viewer_client.get(url).status_code for _ in range(3)]

    assert codes == [200, 200, 429]


# Issue 33 item 2: every page path that evaluates a plan shares the same limit.

WIZARD_ANSWERS = (
    ("model", {"source": "catalog", "model": "llama-3.1-70b"}),
    (
        "precision",
        {
            "weight_dtype": "int8",
            "pre_quantized": "on",
            "kv_cache_dtype": "auto",
            "max_model_len": "8192",
            "gpu_memory_utilization": "0.9",
        },
    ),
    (
        "load",
        {
            "concurrency": "32",
            "avg_input_tokens": "1024",
            "avg_output_tokens": "256",
            "traffic_shape": "steady",
        },
    ),
    ("machines", {"source": "pool", "pool": "a800-pool"}),
)


def _fill_wizard(client) -> None:
    """Answer the first four steps (each answer only redirects: nothing is evaluated)."""
    client.get("/plans/new/?reset=1")
    for step, answers in WIZARD_ANSWERS:
        assert client.post(f"/plans/new/{step}/", {**answers, "action": "next"}).status_code == 302


@override_settings(PLAN_EVALUATION_RATE="3/min")
def test_ten_wizard_finishes_save_only_as_many_plans_as_the_limit(planner_client):
    from planner.models import Plan
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    _fill_wizard(planner_client)

    codes = [
        planner_client.post("/plans/new/operations/", {"action": "finish"}).status_code
        for _ in range(10)
    ]

    assert codes == [302] * 3 + [429] * 7
    assert Plan.objects.count() == 3


@override_settings(PLAN_EVALUATION_RATE="2/min")
def test_the_wizard_preview_shares_the_limit(planner_client):
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    _fill_wizard(planner_client)
    answers = dict(WIZARD_ANSWERS)["load"]

    responses = [planner_client.post("/plans/new/load/preview/", answers) for _ in range(3)]

    assert [r.status_code for r in responses] == [200, 200, 429]
    assert 'data-testid="throttled"' in responses[-1].content.decode()
    assert int(responses[-1]["Retry-After"]) >= 1


@override_settings(PLAN_EVALUATION_RATE="2/min")
def test_a_wizard_step_page_shows_the_limit_instead_of_evaluating(planner_client):
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    _fill_wizard(planner_client)

    pages = [planner_client.get("/plans/new/operations/") for _ in range(3)]

    assert [p.status_code for p in pages] == [200, 200, 200]
    assert [p.context["evaluation"] is None for p in pages] == [False, False, True]
    assert 'data-testid="throttled"' in pages[-1].content.decode()


@override_settings(PLAN_EVALUATION_RATE="2/min")
def test_the_calibration_replan_shares_the_limit(planner_client, planner):
    from django.utils import timezone

    from planner.models import CalibrationProfile, Plan
    from planner.services import plan_create
    from tests.planner.conftest import S1_SPEC
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    with override_settings(PLAN_EVALUATION_RATE=""):
        plan = plan_create(spec=dict(S1_SPEC), actor=planner, title="S1")
    now = timezone.now()
    profile = CalibrationProfile.objects.create(
        key="a800-80g-sxm/llama/int8",
        gpu="a800-80g-sxm",
        model_family="llama",
        weight_dtype="int8",
        version=1,
        factors={},
        window_start=now,
        window_end=now,
        observations=0,
    )
    url = f"/monitoring/calibration/{profile.public_id}/plan/"

    codes = [planner_client.post(url, {"plan": str(plan.public_id)}).status_code for _ in range(3)]

    assert codes == [302, 302, 429]
    assert Plan.objects.count() == 3
