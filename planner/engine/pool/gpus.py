"""Concrete GPU indices for each instance, so that a TP group stays inside one NVLink island.

Without a node's topology the safe rule is the buddy rule: an instance of t GPUs starts at a
multiple of t. On an 8-GPU node whose NVLink (or PCIe switch) domains are halves or quarters,
an aligned group never straddles two domains, and instances packed largest first always fit when
their sizes are powers of two and add up to at most the node's GPUs (which the placement
ensures). Odd sizes (TP 3 or 6) take the first contiguous free GPUs, or any free ones.
On a node with busy GPUs the indices count its free GPUs, in order.

Shared instances (TP 1, half a GPU each) go last, on the fewest free GPUs that hold them two by
two with no model twice on one GPU: grouped by model, largest group first, dealt round-robin.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from planner.engine.pool.options import INSTANCES_PER_SHARED_GPU


@dataclass(frozen=True, slots=True, kw_only=True)
class Instance:
    model: str
    host: str
    gpu_indices: tuple[int, ...]


def _aligned_start(taken: list[bool], size: int) -> int | None:
    for start in range(0, len(taken) - size + 1, size):
        if not any(taken[start : start + size]):
            return start
    return None


def _first_free(taken: list[bool], size: int) -> int | None:
    for start in range(len(taken) - size + 1):
        if not any(taken[start : start + size]):
            return start
    return None


def lay_out(
    host: str, usable_gpus: int, wanted: list[tuple[str, int]], sharing: Sequence[str] = ()
) -> list[Instance]:
    """Return each (model, tp) instance of `wanted`, then each shared instance of `sharing`
    (a model name per instance), with its GPU indices on the node."""
    taken = [False] * usable_gpus
    out: list[Instance] = []
    for model, tp in sorted(wanted, key=lambda w: (-w[1], w[0])):
        start = _aligned_start(taken, tp)
        if start is None:
            start = _first_free(taken, tp)  # a TP of 3 or 6 has no aligned block to keep
        if start is not None:
            indices = tuple(range(start, start + tp))
        else:  # fragmented by odd sizes: any free GPUs (the placement never overfills a node)
            indices = tuple(i for i, used in enumerate(taken) if not used)[:tp]
        for k in indices:
            taken[k] = True
        out.append(Instance(model=model, host=host, gpu_indices=indices))
    return out + _deal_shared(host, [i for i, used in enumerate(taken) if not used], sharing)


def _deal_shared(host: str, free: list[int], sharing: Sequence[str]) -> list[Instance]:
    """Return the shared instances on the fewest of the `free` GPUs, two per GPU at most, one
    model's instances on distinct GPUs (the placement leaves room for that many GPUs)."""
    if not sharing:
        return []
    per_model = Counter(sharing)
    gpus = max(math.ceil(len(sharing) / INSTANCES_PER_SHARED_GPU), max(per_model.values()))
    order = sorted(per_model, key=lambda m: (-per_model[m], m))
    dealt = [m for m in order for _ in range(per_model[m])]
    # The k-th instance goes to GPU k mod `gpus`: a model's consecutive instances span at most
    # `gpus` GPUs, so never two on one, and no GPU gets more than two.
    return [
        Instance(model=model, host=host, gpu_indices=(free[k % gpus],))
        for k, model in enumerate(dealt)
    ]
