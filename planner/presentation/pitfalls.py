"""The pitfalls that apply to the chosen route and layout."""

from __future__ import annotations

from planner.engine.messages import Code
from planner.engine.result import Pitfall, PlanResult

# NCCL runs between nodes only when one replica spans them; replicas that each live inside one
# node never open a cross-node NCCL ring, whatever the number of machines.
_CROSS_NODE_NCCL = (
    Code.PIT_NCCL_SOCKET_IFNAME,
    Code.PIT_NCCL_ROCE_GID,
    Code.PIT_NCCL_TCP,
    Code.PIT_NCCL_DEBUG,
)


def relevant_pitfalls(result: PlanResult) -> tuple[Pitfall, ...]:
    """Return the result's pitfalls without the cross-node NCCL ones when no replica spans
    nodes (plans saved before the engine made that distinction listed them anyway)."""
    best = result.best
    if best is not None and best.spans_nodes:
        return result.pitfalls
    return tuple(p for p in result.pitfalls if p.code not in _CROSS_NODE_NCCL)
