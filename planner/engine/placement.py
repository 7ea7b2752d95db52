"""Ray placement groups: every bundle must fit on ONE node (DOMAIN.md §5, seed 001)."""

from __future__ import annotations

from collections.abc import Sequence

from planner.engine.messages import Code, message
from planner.engine.result import (
    Bundle,
    Candidate,
    Placement,
    PlacementAlternative,
    PlacementStrategy,
    SingleBundle,
)
from planner.engine.spec import Node


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
