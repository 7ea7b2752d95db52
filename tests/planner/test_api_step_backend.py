"""The API with step_backend aiconfigurator never answers 500 (issue 32)."""

import importlib.util

import pytest

EVALUATE = "/api/v1/plans/evaluate/"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("aiconfigurator_core") is None,
    reason="the optional aiconfigurator extra is not installed",
)


def test_the_issue_32_layout_that_answered_500_answers_200(planner_api):
    # Llama-3.1-70B TP4 on 8 × H100, 8 in flight, 32 in / 128 out: OverflowError before.
    spec = {
        "model": "llama-3.1-70b",
        "step_backend": "aiconfigurator",
        "workload": {"concurrency": 8, "avg_input_tokens": 32, "avg_output_tokens": 128},
        "hardware": {"nodes": [{"hostname": "h100-01", "gpu": "h100-sxm", "gpu_count": 8}]},
        "pinned_layout": {"tp": 4, "pp": 1, "replicas": 1},
    }
    response = planner_api.post(EVALUATE, spec, format="json")
    assert response.status_code == 200, response.content[:500]
    pinned = response.json()["pinned"]
    assert pinned["serving"]["step_backend"] == "aiconfigurator"
    unfit = [c for c in response.json()["candidates"] if not c["fits"]]
    assert all(c["ttft_ms"] is None and c["rejected_reason"]["text"] for c in unfit)
