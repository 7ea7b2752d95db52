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
