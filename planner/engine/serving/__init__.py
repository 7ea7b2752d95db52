"""A step-level model of vLLM V1 serving: what a candidate layout delivers under a workload.

`predict(context, workload)` is the pure entry point: it simulates vLLM V1's scheduler
(continuous batching, chunked prefill under max_num_batched_tokens / max_num_seqs, KV-block
admission and preemption, prefix-cache hits) with step times from a roofline, and returns a
typed Prediction (TTFT, TPOT, E2E at p50/p95, throughput, saturation, SLO verdicts).
"""

from planner.engine.serving.context import ServingContext, build_context
from planner.engine.serving.predict import Prediction, predict, steady_state

__all__ = ["Prediction", "ServingContext", "build_context", "predict", "steady_state"]
