"""Which GPUs of which host a saved plan gives to its server: the plan's allocation table.

Pure functions over the typed result of a saved plan (planner.selectors.plan_result). The engine
places each replica on hosts (`Candidate.hosts`, one tuple per replica) with `gpus_per_replica`
spread evenly over `nodes_per_replica`; vLLM (and Ray's placement groups) take a host's GPUs
from index 0 up, so replicas and plans sharing a host get consecutive indexes in turn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from planner.engine.result import Candidate, PlanResult


def recommended(result: PlanResult) -> Candidate | None:
    """Return the layout a plan deploys: the recommended one, as its default bundle and the
    plan-vs-reality comparison take it (a pinned layout is only evaluated beside it), or None
    when nothing fits."""
    return result.best if result.recommendation.fits else None


def gpus_per_host(candidate: Candidate) -> list[tuple[str, int]]:
    """Return (host, GPUs) for every replica's share of every host, in the plan's order."""
    per_node = candidate.gpus_per_replica // max(1, candidate.nodes_per_replica)
    return [(host.lower(), per_node) for hosts in candidate.hosts for host in hosts]


def allocate(plans: Iterable[tuple[str, PlanResult]]) -> dict[str, dict[str, str]]:
    """Return {host: {GPU index: user}} for (user, plan result) pairs, users in the given order."""
    table: dict[str, dict[str, str]] = defaultdict(dict)
    for user, result in plans:
        candidate = recommended(result)
        if candidate is None:
            continue
        for host, count in gpus_per_host(candidate):
            taken = table[host]
            start = len(taken)
            for index in range(start, start + count):
                taken[str(index)] = user
    return dict(table)
