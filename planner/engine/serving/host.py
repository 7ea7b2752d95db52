"""The engine core's CPU work per step, and whether it overlaps the GPU's.

Each step the engine core schedules, prepares the inputs, samples and hands the outputs to the
API server: a fixed part and a part per running sequence (the constants decode_step_overhead_ms
and decode_per_seq_overhead_ms, fitted on vLLM 0.10 runs). Up to vLLM 0.11 that work ran between
two forward passes, so a step took GPU + CPU time. vLLM's asynchronous scheduler
(vllm-project/vllm#19970, "--async-scheduling", on by default since #27614 in 0.12) schedules
step N+1 while step N runs on the GPU, so a step takes the longer of the two. It was first
refused with pipeline parallelism, which it supports since vllm-project/vllm#32359 and #32618
(January 2026, 0.16).
"""

from __future__ import annotations

from planner.engine.profiling import VersionError, parse_version

ASYNC_SCHEDULING_SINCE = (0, 12, 0)
ASYNC_WITH_PP_SINCE = (0, 16, 0)


def async_scheduling(vllm_version: str, pp: int) -> bool:
    """Return whether `vllm_version` overlaps the engine's CPU work with the GPU's by default."""
    try:
        v = parse_version(vllm_version)
    except VersionError:
        return False
    if pp > 1:
        return v >= ASYNC_WITH_PP_SINCE
    return v >= ASYNC_SCHEDULING_SINCE


def step_wall_ms(gpu_ms: float, cpu_ms: float, *, overlapped: bool) -> float:
    """Return a step's wall time from its GPU and engine-CPU times."""
    return max(gpu_ms, cpu_ms) if overlapped else gpu_ms + cpu_ms


# vLLM 0.11 made FULL_AND_PIECEWISE the default CUDA-graph mode (vllm-project/vllm#25444): a
# step that carries prefill chunks replays a full graph like a decode-only step, instead of the
# piecewise graphs (one launch per op between the attention calls) it ran before.
FULL_GRAPHS_FOR_MIXED_SINCE = (0, 11, 0)


def mixed_steps_replay_full_graphs(vllm_version: str) -> bool:
    """Return whether `vllm_version` runs mixed prefill/decode steps as full CUDA graphs."""
    try:
        return parse_version(vllm_version) >= FULL_GRAPHS_FOR_MIXED_SINCE
    except VersionError:
        return False
