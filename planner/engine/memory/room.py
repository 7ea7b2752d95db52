"""What would leave room for a KV cache when weights and start-up overheads fill the GPU, or
leave less than one request of max_model_len.

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

# The reason of a replica that does not start, and its two hinted forms: (fewer sequences, more
# of the GPU).
HINTED = {
    Code.REJECT_MEMORY_OVER: (Code.REJECT_MEMORY_SEQS, Code.REJECT_MEMORY_UTILIZATION),
    Code.REJECT_KV: (Code.REJECT_KV_SEQS, Code.REJECT_KV_UTILIZATION),
}
# The reasons that name a setting which would start the layout.
SETTING_WOULD_START = frozenset(code for pair in HINTED.values() for code in pair)

# The shares of the GPU vLLM is commonly started with above its 0.9 default; beyond 0.95 the
# CUDA context and other processes have too little left to plan on.
UTILIZATIONS = (0.92, 0.95)
# Sequence limits tried below the one profiled, largest first.
SEQUENCE_LIMITS = (512, 256, 128, 64)


def with_room_hint(
    mem: MemoryResult,
    *,
    utilization: float,
    replan: Callable[..., MemoryResult],
) -> MemoryResult:
    """Return `mem` with a reason that names the change that would start it, if one does.

    `replan(max_num_seqs=...)` or `replan(utilization=...)` plans the same replica's memory
    with that one setting changed. A replica with no KV budget (REJECT_MEMORY_OVER) or too
    little for one request of max_model_len (REJECT_KV) is looked at; a smaller sequence limit
    is preferred, since it needs no more of the GPU.
    """
    reason = mem.reason
    if mem.fits or reason is None or reason.code not in HINTED:
        return mem
    with_seqs, with_share = HINTED[reason.code]
    for seqs in SEQUENCE_LIMITS:
        if seqs < mem.profiled_seqs and replan(max_num_seqs=seqs).fits:
            return replace(mem, reason=message(with_seqs, **reason.params, max_num_seqs=seqs))
    for share in UTILIZATIONS:
        if share > utilization and replan(utilization=share).fits:
            return replace(mem, reason=message(with_share, **reason.params, utilization=share))
    return mem
