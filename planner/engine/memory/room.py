"""What would leave room for a KV cache when weights and start-up overheads fill the GPU.

vLLM's start-up profile runs the sampler over `max_num_seqs` dummy sequences: fp32 logits of the
whole vocabulary, copied several times (activations.py). With a large vocabulary that peak alone
can take the room a KV cache needed: gpt-oss-120b (201,088 tokens) on one 80 GB GPU under vLLM
0.11-0.16 profiles 1,024 sequences at about 7.8 GiB, and vLLM's gpt-oss guide notes the
out-of-memory at the default settings. Shortening max_model_len does not help there; fewer
sequences or a larger share of the GPU do. `with_room_hint` says which, checked by planning the
memory again with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from planner.engine.memory.budget import MemoryResult
from planner.engine.messages import Code, message

# The shares of the GPU vLLM is commonly started with above its 0.9 default; beyond 0.95 the
# CUDA context and other processes have too little left to plan on.
UTILIZATIONS = (0.92, 0.95)
# Sequence limits tried below the one profiled, largest first.
SEQUENCE_LIMITS = (512, 256, 128, 64)


def with_room_hint(
    mem: MemoryResult,
    *,
    profiled_seqs: int,
    utilization: float,
    replan: Callable[..., MemoryResult],
) -> MemoryResult:
    """Return `mem` with a reason that names the change that would start it, if one does.

    `replan(max_num_seqs=...)` or `replan(utilization=...)` plans the same replica's memory
    with that one setting changed. Only a replica with no KV budget is looked at
    (REJECT_MEMORY_OVER); a smaller sequence limit is preferred, since it needs no more of the
    GPU.
    """
    reason = mem.reason
    if mem.fits or reason is None or reason.code != Code.REJECT_MEMORY_OVER:
        return mem
    for seqs in SEQUENCE_LIMITS:
        if seqs < profiled_seqs and replan(max_num_seqs=seqs).fits:
            hint = message(Code.REJECT_MEMORY_SEQS, **reason.params, max_num_seqs=seqs)
            return replace(mem, reason=hint)
    for share in UTILIZATIONS:
        if share > utilization and replan(utilization=share).fits:
            hint = message(Code.REJECT_MEMORY_UTILIZATION, **reason.params, utilization=share)
            return replace(mem, reason=hint)
    return mem
