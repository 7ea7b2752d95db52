"""The throughput model against a published vLLM benchmark (fixtures/vllm_benchmarks.json)."""

import json
from pathlib import Path

import pytest

from planner.engine import plan, spec_from_dict

DOC = json.loads((Path(__file__).parent / "fixtures" / "vllm_benchmarks.json").read_text())
SETUP = DOC["setup"]


@pytest.mark.parametrize("point", DOC["points"], ids=lambda p: f"{p['prompts']}-prompts")
def test_output_throughput_within_15_percent(point):
    spec = spec_from_dict(
        {
            "model": SETUP["model_slug"],
            "max_model_len": SETUP["max_model_len"],
            "gpu_memory_utilization": SETUP["gpu_memory_utilization"],
            "workload": {
                "concurrency": point["prompts"],
                "avg_input_tokens": SETUP["avg_input_tokens"],
                "avg_output_tokens": SETUP["avg_output_tokens"],
            },
            "hardware": {"nodes": [{"hostname": "a", "gpu": SETUP["gpu"], "gpu_count": 1}]},
        }
    )
    best = plan(spec).best
    assert best.output_throughput_tok_s == pytest.approx(point["output_tok_s"], rel=0.15)
    # Decode-only inter-token latency never exceeds the measured TPOT, which also carries the
    # prefill chunks interleaved with decoding.
    assert best.itl_ms <= point["tpot_ms"] * 1.05
