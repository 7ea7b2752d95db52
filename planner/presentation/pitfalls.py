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
    return tuple(p for p in result.pitfalls if not _cross_node_nccl(p))


def _cross_node_nccl(p: Pitfall) -> bool:
    """Return whether `p` is about NCCL between nodes (read off its English text when an
    earlier engine saved it as text)."""
    if p.code == Code.LEGACY_PITFALL:
        return "NCCL" in str(p.message.params.get("text", ""))
    return p.code in _CROSS_NODE_NCCL
