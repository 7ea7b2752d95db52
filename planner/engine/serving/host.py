"""The engine core's CPU work per step, and whether it overlaps the GPU's.

Each step the engine core schedules, prepares the inputs, samples and hands the outputs to the
API server: a fixed part and a part per running sequence (the constants decode_step_overhead_ms
and decode_per_seq_overhead_ms, fitted on vLLM 0.10 runs). Up to vLLM 0.11 that work ran between
two forward passes, so a step took GPU + CPU time. vLLM's asynchronous scheduler
(vllm-project/vllm#19970, "--async-scheduling", on by default since #27614 in 0.12) schedules
step N+1 while step N runs on the GPU, so a step takes the longer of the two. It was first
refused with pipeline parallelism, which it supports since vllm-project/vllm#32359 and #32618
(January 2026, 0.16).

Before V1 (vLLM < 0.8) the engine was V0, whose host work per sequence was several times V1's,
and whose default scheduler ran prompts whole, ahead of every decode (`EngineEra`, below). GPUs
below compute capability 8.0 kept V0 up to vLLM 0.10.1 (profiling.runs_v0).
"""

from __future__ import annotations

from enum import StrEnum

from planner.engine.assumptions import Assumptions
from planner.engine.profiling import (
    V0_CHUNK_TOKENS,
    VersionError,
    parse_version,
    runs_v0,
    v0_chunks_prefill,
)

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


# vLLM 0.11 made FULL_AND_PIECEWISE the default CUDA-graph mode (vllm-project/vllm#25444). From
# that version on the model gives a step that carries prefill chunks the decode-only launch cost.
# Known to be the wrong half: vLLM's CUDA-graph design page says FULL_AND_PIECEWISE replays full
# graphs for uniform decode batches and piecewise graphs for prefill and mixed ones, and before
# 0.11 every V1 step was piecewise, so from 0.11 decode-only steps got cheaper while mixed steps
# did not. Kept until a run on 0.11+ can set the full-graph decode cost (the constants were
# fitted on 0.10, where both are piecewise).
FULL_GRAPHS_FOR_MIXED_SINCE = (0, 11, 0)


def mixed_steps_replay_full_graphs(vllm_version: str) -> bool:
    """Return whether `vllm_version` runs mixed prefill/decode steps as full CUDA graphs."""
    try:
        return parse_version(vllm_version) >= FULL_GRAPHS_FOR_MIXED_SINCE
    except VersionError:
        return False


class EngineEra(StrEnum):
    """How a vLLM version splits its CPU work between processes, coarsely.

    vLLM 0.6.0's performance notes (blog.vllm.ai/2024/09/05/perf-update) profiled Llama 3 8B
    on one H100 under 0.5.3: the API server took 33 % of the time, scheduling and input
    preparation 29 %, the GPU 38 %. 0.6.0 moved the API server into its own process
    (vllm-project/vllm#6883) and overlapped output processing with the next step (#7049); V1
    (default from 0.8.0) rewrote the engine core around a persistent batch.
    """

    V0_IN_PROCESS = "v0-in-process"  # < 0.6: API server, detokeniser and engine on one thread
    V0 = "v0"  # 0.6 to 0.7 (to 0.10.1 below Ampere): the API server apart, heavy Python work
    V1 = "v1"  # from 0.8: serving/host.py's constants, fitted on 0.10


V0_API_PROCESS_SINCE = (0, 6, 0)


def engine_era(vllm_version: str, *, pre_ampere: bool = False) -> EngineEra:
    """Return the era of `vllm_version` on a GPU (`pre_ampere`: below compute capability 8.0,
    which kept V0 up to 0.10.1); V1 when the version cannot be read."""
    try:
        v = parse_version(vllm_version)
    except VersionError:
        return EngineEra.V1
    if not runs_v0(v, pre_ampere=pre_ampere):
        return EngineEra.V1
    return EngineEra.V0 if v >= V0_API_PROCESS_SINCE else EngineEra.V0_IN_PROCESS


# Where V0 did not chunk prompts (profiling.v0_chunks_prefill), its scheduler ran each step
# either whole prompts (as many as max(max_model_len, 2048) tokens allow) or every running
# decode, prompts first: a burst stalls the decodes of everyone already running.
V0_WHOLE_PROMPT_MIN_BATCHED_TOKENS = 2048


def prefill_first(
    era: EngineEra, max_model_len: int | None, chunked_prefill: bool | None = None
) -> bool:
    """Return whether the scheduler of `era` runs prompts whole, before decodes.

    `chunked_prefill` is a setting a run states; None follows the version's default, which
    needs `max_model_len` (None: unknown, taken as chunked).
    """
    if era == EngineEra.V1 or chunked_prefill:
        return False
    if chunked_prefill is False:
        return True
    return max_model_len is not None and not v0_chunks_prefill(max_model_len)


def default_v0_batched_tokens(era: EngineEra, max_model_len: int) -> int | None:
    """Return V0's default max_num_batched_tokens, or None for V1."""
    if era == EngineEra.V1:
        return None
    if prefill_first(era, max_model_len):
        return max(max_model_len, V0_WHOLE_PROMPT_MIN_BATCHED_TOKENS)
    return V0_CHUNK_TOKENS


def host_overheads(era: EngineEra, a: Assumptions, *, gpus: int = 1) -> tuple[float, float]:
    """Return the engine's host work per step in `era`: (fixed ms, ms per running sequence).

    A V0 replica on several GPUs also broadcast each step's inputs from its driver worker to
    the others: a round trip per step and metadata per running sequence
    (`v0_multi_gpu_step_overhead_ms`, `v0_multi_gpu_per_seq_overhead_ms`). V1's workers keep
    their own persistent batch.
    """
    if era == EngineEra.V1:
        return a.decode_step_overhead_ms, a.decode_per_seq_overhead_ms
    several = gpus > 1
    step = a.v0_multi_gpu_step_overhead_ms if several else 0.0
    per_seq = a.v0_multi_gpu_per_seq_overhead_ms if several else 0.0
    if era == EngineEra.V0_IN_PROCESS:
        return (
            a.v0_in_process_step_overhead_ms + step,
            a.v0_in_process_per_seq_overhead_ms + per_seq,
        )
    return a.v0_step_overhead_ms + step, a.v0_per_seq_overhead_ms + per_seq
