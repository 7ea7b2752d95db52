"""A plan that names no vLLM version says whose memory rules it assumed (issue 32)."""

from planner.engine import plan, spec_from_dict
from planner.engine.messages import Code
from planner.engine.vllm_flags import VLLM_VERSION


def _spec(**extra):
    return spec_from_dict(
        {
            "model": "llama-3.1-8b",
            "workload": {"concurrency": 8},
            "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 1}]},
            **extra,
        }
    )


def test_no_stated_version_is_an_assumption_the_plan_states():
    reasons = plan(_spec()).recommendation.reasons
    assumed = [r for r in reasons if r.code is Code.VLLM_VERSION_ASSUMED]
    assert len(assumed) == 1
    assert assumed[0].params == {"vllm_version": VLLM_VERSION}


def test_a_stated_version_is_no_assumption():
    result = plan(_spec(vllm_version="0.10.1"))
    assert all(r.code is not Code.VLLM_VERSION_ASSUMED for r in result.recommendation.reasons)
    assert result.memory_rules.vllm_version == "0.10.1"
