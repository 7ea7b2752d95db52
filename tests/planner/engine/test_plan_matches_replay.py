"""A published run pinned through plan() gets the prediction its replay gets.

The held-out figures of docs/benchmarks.md come from replaying each run (serving/replay.py);
a user, and the acceptance, ask plan() for the same layout with a spec. Both must build the
same replica: the same start-up memory under the run's vLLM release, the same scheduler limits
and links, the same simulated load. These runs state nothing a spec cannot say (no logged KV
cache, no cached prompts, no overridden link), so the two numbers must be one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.engine import plan, spec_from_dict
from planner.engine.serving.replay import replay, workload_of
from planner.engine.serving.validation import load_runs

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = {
    r["id"]: r
    for r in load_runs([FIXTURES / "serving_runs.json", FIXTURES / "serving_load_runs.json"])
}
EXPRESSIBLE = (
    "simonmo-deepseek-r1-h200-dgx-tp8-random-5000x1000",  # MLA MoE in FP8, Poisson, vLLM 0.8.4
    "simonmo-deepseek-r1-h200-dgx-tp8-random-30000x100",  # the same, its KV cache binding
    "lambda054-llama3-8b-h100-mml2048-burst160",  # V0 whole prompts, ShareGPT lengths
    "vllm23696-gpt-oss-120b-b200-tp8-sharegpt-burst1000",  # inline config, MXFP4, B200
    "kvcached331-qwen3-0.6b-h100-poisson16-512x128",  # asynchronous scheduling (0.19)
    "jz-qwen2.5-72b-h100-tp8-single-node-c1",  # closed loop of one, TP 8 (vLLM 0.17)
)


def spec_of(run: dict[str, Any]) -> dict[str, Any]:
    """Return the plan spec a user would write for `run`, its layout pinned."""
    wl = workload_of(run)
    workload: dict[str, Any] = {
        "arrival": wl.arrival,
        "concurrency": wl.concurrency,
        "avg_input_tokens": wl.avg_input_tokens,
        "avg_output_tokens": wl.avg_output_tokens,
        "input_tokens_sd": wl.input_tokens_sd,
        "output_tokens_sd": wl.output_tokens_sd,
        "num_requests": wl.num_requests,
    }
    if wl.burst_size:
        workload["burst_size"] = wl.burst_size
    if wl.request_rate_per_s:
        workload["request_rate_per_s"] = wl.request_rate_per_s
    tp, pp = int(run["tp"]), int(run.get("pp", 1))
    model = (
        {"hf_config": run["hf_config"], "name": run["model_slug"]}
        if run.get("hf_config")
        else run["model_slug"]
    )
    return {
        "model": model,
        "weight_dtype": run["weight_dtype"],
        "kv_cache_dtype": run.get("kv_cache_dtype", "auto"),
        "max_model_len": run["max_model_len"],
        "gpu_memory_utilization": run["gpu_memory_utilization"],
        "vllm_version": run["vllm_version"],
        "max_num_batched_tokens": run["max_num_batched_tokens"],
        "max_num_seqs": run["max_num_seqs"],
        "workload": workload,
        "hardware": {
            "pool_kind": "dedicated",
            "nodes": [{"hostname": "gpu-1", "gpu": run["gpu"], "gpu_count": tp * pp}],
        },
        "pinned_layout": {"tp": tp, "pp": pp, "replicas": 1},
    }


@pytest.mark.parametrize("run_id", EXPRESSIBLE)
def test_a_pinned_run_is_predicted_as_its_replay(run_id):
    run = RUNS[run_id]
    for stated in ("kv_tokens", "chunked_prefill", "tp_link_bandwidth_gbs", "pp_link"):
        assert stated not in run, f"{run_id} states {stated}: a spec cannot say it"
    assert not run["load"].get("cached_prompts"), f"{run_id} had cached prompts"

    result = plan(spec_from_dict(spec_of(run)))
    pinned = result.pinned or next(
        c for c in result.candidates if (c.tp, c.pp, c.replicas) == (run["tp"], run.get("pp", 1), 1)
    )
    assert pinned.fits, pinned.reason
    assert pinned.serving is not None
    planned, replayed = pinned.serving, replay(run)
    for field in ("ttft_mean_ms", "tpot_mean_ms", "output_tok_s"):
        assert getattr(planned, field) == pytest.approx(getattr(replayed, field), rel=1e-9), field
