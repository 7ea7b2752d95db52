"""Concrete GPU indices for each instance, so that a TP group stays inside one NVLink island.

Without a node's topology the safe rule is the buddy rule: an instance of t GPUs starts at a
multiple of t. On an 8-GPU node whose NVLink (or PCIe switch) domains are halves or quarters,
an aligned group never straddles two domains, and instances packed largest first always fit when
their sizes are powers of two and add up to at most the node's GPUs (which the placement
ensures). Odd sizes (TP 3 or 6) take the first contiguous free GPUs, or any free ones.
On a node with busy GPUs the indices count its free GPUs, in order.
"""

from __future__ import annotations

from dataclasses import dataclass


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


def lay_out(host: str, usable_gpus: int, wanted: list[tuple[str, int]]) -> list[Instance]:
    """Return each (model, tp) instance of `wanted` with its GPU indices on the node."""
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
    return out
