"""A pinned layout is always in the result: placeable or not, fitting or not, with why.

`evaluate` places a layout on the GPUs the nodes have free. When a pin cannot be placed (no node
has room for a replica, fewer replicas fit than pinned, or no node of this size can hold its
shape) it is still evaluated as if room were made, so its memory and speeds say what it would
deliver once placed, and it carries why it cannot be placed now and what would place it.
"""

from __future__ import annotations

from dataclasses import replace

from planner.engine.assumptions import Assumptions
from planner.engine.layouts import NodeGroup, evaluate, score_candidates
from planner.engine.messages import Code, Message, message
from planner.engine.result import Candidate
from planner.engine.serving_choice import with_serving
from planner.engine.shown import shown_tok_s
from planner.engine.spec import Layout, PlanSpec


def evaluate_pin(
    spec: PlanSpec, group: NodeGroup, layout: Layout, *, dtype: str, a: Assumptions
) -> Candidate:
    """Return the pinned layout evaluated on `group`, whatever its room (never None)."""
    placed = evaluate(spec, group, layout, dtype=dtype, a=a, pinned=True)
    if placed is not None and placed.hosts and placed.replicas >= layout.replicas:
        return placed
    if placed is not None:
        # Some replicas placed, fewer than pinned: evaluate's reason says so (REJECT_ROOM).
        reason, hint = _why_not_placed(group, layout)
        return replace(placed, placeable=False, placement_reason=reason, placement_hint=hint)
    made_room = _with_room_for(group, layout.tp * layout.pp)
    once_placed = evaluate(spec, made_room, layout, dtype=dtype, a=a, pinned=True)
    assert once_placed is not None  # nodes as big as the layout hold it inside one node
    reason, hint = _why_not_placed(group, layout)
    return replace(
        once_placed,
        hosts=(),
        fits=False,
        serves_load=False,
        score=0.0,
        rejected_reason=once_placed.rejected_reason or reason,
        placeable=False,
        placement_reason=reason,
        placement_hint=hint,
    )


def _with_room_for(group: NodeGroup, gpus: int) -> NodeGroup:
    """Return `group` with every GPU free; nodes too small for a layout of `gpus` GPUs that
    none of their sizes can lay out (TP6 on 4-GPU nodes) are grown to hold it."""
    biggest = max(n.gpu_count for n in group.nodes)
    fits_shape = gpus <= biggest or (gpus % biggest == 0)
    nodes = tuple(
        replace(n, free_gpus=None, gpu_count=n.gpu_count if fits_shape else max(gpus, n.gpu_count))
        for n in group.nodes
    )
    usable = tuple(n.gpu_count for n in nodes)
    return replace(group, nodes=nodes, usable=usable, gpus_per_node=max(usable))


def _per_node_need(layout: Layout, gpus_per_node: int) -> tuple[int, int]:
    """Return (GPUs one node must give a replica, nodes per replica) on nodes of that size."""
    gpus = layout.tp * layout.pp
    if gpus <= gpus_per_node:
        return gpus, 1
    per_node = layout.tp if layout.tp <= gpus_per_node else gpus_per_node
    return per_node, -(-gpus // per_node)


def _why_not_placed(group: NodeGroup, layout: Layout) -> tuple[Message, Message]:
    """Return why the pin has no room on the nodes' free GPUs, and what would give it room.

    A replica needs `nodes_per_replica` groups of `need` GPUs, each group on one node (a node
    gives a replica spanning nodes one group); the fewest GPUs to free fill the groups missing.
    """
    need, nodes_per_replica = _per_node_need(layout, max(n.gpu_count for n in group.nodes))
    spans = nodes_per_replica > 1
    wanted = nodes_per_replica * layout.replicas
    free = {n.hostname: u for n, u in zip(group.nodes, group.usable, strict=True)}
    size = {n.hostname: n.gpu_count for n in group.nodes}

    def groups(host: str) -> int:
        return min(1, free[host] // need) if spans else free[host] // need

    held = sum(groups(h) for h in free)
    reason = message(
        Code.PIN_NO_ROOM,
        gpus=need,
        nodes=wanted,
        with_room=held,
        most_free=max(free.values(), default=0),
    )
    freed: dict[str, int] = {}
    for _ in range(max(wanted - held, 0)):
        costs = [
            (need - free[h] % need if not spans else need - free[h], h)
            for h in sorted(free)
            if not (spans and free[h] >= need)
        ]
        costs = [(c, h) for c, h in costs if free[h] + c <= size[h]]
        if not costs:
            return reason, message(Code.PIN_NEEDS_NODES, gpus=need, nodes=wanted - held)
        cost, host = min(costs)
        free[host] += cost
        freed[host] = freed.get(host, 0) + cost
        held += 1
    return reason, message(
        Code.PIN_FREE_GPUS, gpus=sum(freed.values()), hosts=", ".join(sorted(freed))
    )


def evaluate_pinned(
    spec: PlanSpec,
    group: NodeGroup,
    cands: list[Candidate],
    best: Candidate,
    chosen: str,
    a: Assumptions,
) -> tuple[Candidate, Message]:
    """Return the user's pinned layout evaluated beside the candidates, and the reason about it.

    A pinned layout keeps the weight dtype the user asked for: it is never quantized behind
    their back; when it does not fit at that dtype, the verdict says so and why.
    """
    assert spec.pinned is not None
    requested = spec.weight_dtype
    pinned_c = evaluate_pin(spec, group, spec.pinned, dtype=requested, a=a)
    scored = score_candidates(spec, [*cands, pinned_c])
    pinned = with_serving(spec, next(c for c in scored if c.pinned), a)
    layout = {"tp": spec.pinned.tp, "pp": spec.pinned.pp, "replicas": spec.pinned.replicas}
    verdict = pinned_verdict(pinned, requested, chosen)
    if pinned.output_throughput_tok_s is None:
        return pinned, message(Code.PINNED_LAYOUT_NO_SPEED, **layout, verdict=verdict)
    return pinned, message(
        Code.PINNED_LAYOUT,
        **layout,
        verdict=verdict,
        throughput_tok_s=round(shown_tok_s(pinned) or 0.0, 0),
        best_tok_s=round(shown_tok_s(best) or 0.0, 0),
        score=pinned.score,
        best_score=best.score,
    )


def pinned_verdict(pinned: Candidate, requested: str, chosen: str) -> Message:
    """Return what became of the user's pinned layout, judged at the dtype they asked for."""
    memory_fits = pinned.output_throughput_tok_s is not None
    if memory_fits and not pinned.placeable and pinned.placement_reason and pinned.placement_hint:
        return message(
            Code.PINNED_NOT_PLACEABLE, reason=pinned.placement_reason, hint=pinned.placement_hint
        )
    if not pinned.fits:
        reason = pinned.rejected_reason or message(Code.REJECT_MEMORY)
        if requested != chosen:
            return message(Code.PINNED_NO_FIT_AT_DTYPE, dtype=requested, reason=reason)
        return message(Code.PINNED_NO_FIT, reason=reason)
    if not pinned.serves_load:
        return message(Code.PINNED_SHORT_OF_LOAD)
    return message(Code.PINNED_FITS)
