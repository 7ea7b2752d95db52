"""Ray placement groups: every bundle must fit on ONE node (DOMAIN.md §5, seed 001)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from planner.engine.layouts import NodeGroup
from planner.engine.messages import Code, message
from planner.engine.result import (
    Backend,
    Bundle,
    Candidate,
    Placement,
    PlacementAlternative,
    PlacementStrategy,
    SingleBundle,
)
from planner.engine.spec import Node, PlanSpec


def _place(bundles: Sequence[int], nodes: Sequence[Node], spread: bool) -> list[str | None]:
    """Assign each bundle's GPU count to a node's free GPUs, bundle by bundle (first fit)."""
    free = {n.hostname: n.usable_gpus for n in nodes}
    used: set[str] = set()
    out: list[str | None] = []
    for gpus in bundles:
        host = next((h for h, f in free.items() if f >= gpus and not (spread and h in used)), None)
        if host is not None:
            free[host] -= gpus
            used.add(host)
        out.append(host)
    return out


def plan_placement(best: Candidate, nodes: Sequence[Node], *, required: bool) -> Placement:
    """Return the bundles one replica needs, whether each fits a node, and the naive bundle."""
    gpus = best.gpus_per_replica
    per_node = max((n.usable_gpus for n in nodes), default=gpus)
    if best.nodes_per_replica == 1:
        sizes = [gpus]
        strategy = PlacementStrategy.PACK
    else:
        sizes = []
        left = gpus
        while left > 0:
            take = min(per_node, left)
            sizes.append(take)
            left -= take
        strategy = PlacementStrategy.STRICT_SPREAD
    hosts = _place(sizes, nodes, spread=strategy == PlacementStrategy.STRICT_SPREAD)
    bundles = tuple(
        Bundle(resources={"GPU": s, "CPU": 2 * s}, fits=h is not None, node=h or "")
        for s, h in zip(sizes, hosts, strict=True)
    )
    max_free = max((n.usable_gpus for n in nodes), default=0)
    single = SingleBundle(
        resources={"GPU": gpus},
        placeable=gpus <= max_free,
        reason=None if gpus <= max_free else message(Code.BUNDLE_TOO_BIG, gpus=max_free),
    )
    return Placement(
        required=required,
        gpus_per_replica=gpus,
        strategy=strategy,
        bundles=bundles,
        placeable=all(b.fits for b in bundles),
        single_bundle=single,
        alternative=None
        if single.placeable
        else PlacementAlternative(bundles=tuple({"GPU": s} for s in sizes), strategy=strategy),
    )


def nodes_of(group: NodeGroup, cand: Candidate) -> list[Node]:
    """Return the nodes of `group` that host a replica of `cand`, best first."""
    names = {h for hosts in cand.hosts for h in hosts}
    return [n for n in group.nodes if n.hostname in names]


def recommendation_placement(
    spec: PlanSpec,
    group: NodeGroup,
    best: Candidate,
    used_nodes: list[Node],
    pinned: Candidate | None,
    backend: Backend,
) -> Placement:
    """Return the placement of the recommendation, with the pinned layout's beside it."""
    placement = plan_placement(
        best,
        used_nodes or list(group.nodes[:2]),
        required=backend == Backend.RAY or spec.hardware.pool_kind == "shared",
    )
    if pinned is None:
        return placement
    pinned_nodes = nodes_of(group, pinned)
    return replace(
        placement,
        pinned=plan_placement(
            pinned,
            pinned_nodes or list(group.nodes[: pinned.nodes_per_replica]),
            required=spec.hardware.pool_kind == "shared",
        ),
    )
