"""Which GPUs of which host a saved plan gives to its server: the plan's allocation table.

Pure functions over the engine result stored in planner.models.Plan.result. The engine places
each replica on hosts (`candidates[].hosts`, one tuple per replica) with `gpus_per_replica`
spread evenly over `nodes_per_replica`; vLLM (and Ray's placement groups) take a host's GPUs
from index 0 up, so replicas and plans sharing a host get consecutive indexes in turn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any


def recommended(result: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Return the candidate a plan result recommends (the pinned one when the plan pins)."""
    pinned = result.get("pinned")
    if isinstance(pinned, Mapping) and pinned.get("hosts"):
        return pinned
    wanted = (result.get("recommendation") or {}).get("candidate_id")
    for candidate in result.get("candidates") or ():
        if isinstance(candidate, Mapping) and candidate.get("id") == wanted:
            return candidate
    return None


def gpus_per_host(candidate: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Return (host, GPUs) for every replica's share of every host, in the plan's order."""
    try:
        per_node = int(candidate["gpus_per_replica"]) // max(1, int(candidate["nodes_per_replica"]))
    except (KeyError, TypeError, ValueError):
        return []
    out = []
    for hosts in candidate.get("hosts") or ():
        for host in hosts or ():
            out.append((str(host).lower(), per_node))
    return out


def allocate(plans: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, dict[str, str]]:
    """Return {host: {GPU index: user}} for (user, plan result) pairs, users in the given order."""
    table: dict[str, dict[str, str]] = defaultdict(dict)
    for user, result in plans:
        candidate = recommended(result) if isinstance(result, Mapping) else None
        if candidate is None:
            continue
        for host, count in gpus_per_host(candidate):
            taken = table[host]
            start = len(taken)
            for index in range(start, start + count):
                taken[str(index)] = user
    return dict(table)
