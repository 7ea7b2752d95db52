"""The Ray dashboard's JSON answers: the exporters to scrape, the nodes, the placement groups,
and what the cluster reserves and still waits for (ray status).

Each reader refuses an answer of an unexpected shape with a SourceError naming what it read.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from .errors import SourceError
from .series import (
    Sample,
    make_sample,
)


def _load(body: str | bytes, what: str) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SourceError(f"{what}: not JSON ({exc})") from None


def _unwrap(data: Any, what: str) -> Mapping[str, Any]:
    """Return the `data` of a `{"result": true, "msg": ..., "data": {...}}` dashboard answer."""
    if not isinstance(data, Mapping) or "data" not in data:
        raise SourceError(f"{what}: expected an object with 'result' and 'data'")
    if data.get("result") is False:
        # Not the dashboard's own message: it is the answering server's text, like a body.
        raise SourceError(f"{what}: the dashboard answered with an error")
    inner = data["data"]
    if not isinstance(inner, Mapping):
        raise SourceError(f"{what}: 'data' is not an object")
    return inner


_Reader = TypeVar("_Reader", bound=Callable[..., Any])


def _dashboard_answer(what: str) -> Callable[[_Reader], _Reader]:
    """Make a reader of a dashboard answer raise SourceError for any shape it did not expect.

    The answer is the target's to write: valid JSON of another shape (a string where an object
    was expected, "abc" for a port) must fail the poll as a source error, never escape as a
    TypeError. The message names the endpoint, not the answer's content.
    """

    def wrap(reader: _Reader) -> _Reader:
        @functools.wraps(reader)
        def read(*args: Any, **kwargs: Any) -> Any:
            try:
                return reader(*args, **kwargs)
            except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
                raise SourceError(f"{what}: unexpected answer ({type(exc).__name__})") from None

        return cast(_Reader, read)

    return wrap


@_dashboard_answer("/api/prometheus/sd")
def exporters_from_sd(body: str | bytes) -> list[str]:
    """Return the `host:port` exporters listed by `GET /api/prometheus/sd`."""
    data = _load(body, "/api/prometheus/sd")
    if not isinstance(data, list):
        raise SourceError("/api/prometheus/sd: expected a list of target groups")
    targets: list[str] = []
    for group in data:
        if isinstance(group, Mapping):
            targets.extend(str(t) for t in group.get("targets", []) if isinstance(t, str))
    return list(dict.fromkeys(targets))


@dataclass(frozen=True, slots=True)
class NodeInfo:
    node_id: str
    ip: str
    hostname: str
    metrics_export_port: int | None
    is_head: bool
    state: str

    @property
    def exporter(self) -> str | None:
        if self.metrics_export_port is None:
            return None
        host = f"[{self.ip}]" if ":" in self.ip else self.ip
        return f"{host}:{self.metrics_export_port}"


@_dashboard_answer("/nodes?view=summary")
def nodes_from_summary(body: str | bytes) -> list[NodeInfo]:
    """Return the nodes of `GET /nodes?view=summary` (camel-cased keys, wrapped answer)."""
    data = _unwrap(_load(body, "/nodes?view=summary"), "/nodes?view=summary")
    nodes = []
    for entry in data.get("summary", []):
        raylet = entry.get("raylet", {}) if isinstance(entry, Mapping) else {}
        port = raylet.get("metricsExportPort")
        nodes.append(
            NodeInfo(
                node_id=str(raylet.get("nodeId", "")),
                ip=str(entry.get("ip") or raylet.get("nodeManagerAddress", "")),
                hostname=str(entry.get("hostname") or raylet.get("nodeManagerHostname", "")),
                metrics_export_port=int(port) if isinstance(port, int | str) and port else None,
                is_head=bool(raylet.get("isHeadNode", False)),
                state=str(raylet.get("state", "")),
            )
        )
    return nodes


@dataclass(frozen=True, slots=True)
class PlacementGroupInfo:
    placement_group_id: str
    name: str
    state: str
    scheduling_state: str
    strategy: str
    bundles: tuple[dict[str, float], ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "placement_group_id": self.placement_group_id,
            "name": self.name,
            "state": self.state,
            "scheduling_state": self.scheduling_state,
            "strategy": self.strategy,
            "bundles": [dict(b) for b in self.bundles],
        }


@_dashboard_answer("/api/v0/placement_groups")
def placement_groups(body: str | bytes) -> list[PlacementGroupInfo]:
    """Return the groups of `GET /api/v0/placement_groups?detail=1` (snake case, wrapped)."""
    what = "/api/v0/placement_groups"
    data = _unwrap(_load(body, what), what)
    result = data.get("result", {})
    entries = result.get("result", []) if isinstance(result, Mapping) else result
    groups = []
    for entry in entries or []:
        if not isinstance(entry, Mapping):
            continue
        stats = entry.get("stats") or {}
        bundles = tuple(
            {str(k): float(v) for k, v in (b.get("unit_resources") or {}).items()}
            for b in entry.get("bundles") or []
            if isinstance(b, Mapping)
        )
        groups.append(
            PlacementGroupInfo(
                placement_group_id=str(entry.get("placement_group_id", "")),
                name=str(entry.get("name", "")),
                state=str(entry.get("state", "")),
                scheduling_state=str(stats.get("scheduling_state", "")),
                strategy=str(entry.get("strategy", "")),
                bundles=bundles,
            )
        )
    return groups


@_dashboard_answer("/api/cluster_status")
def reservations(status_body: str | bytes, groups: Sequence[PlacementGroupInfo]) -> list[Sample]:
    """Return GPUs/CPUs reserved by placement groups and actually in use, from cluster_status.

    `ray_resources` counts a reservation as used; `ray status` counts what runs inside it. The
    usage map camel-cases the group resources (`GPU_group_<id>` becomes `GPUGroup<Id>`), so the
    whole-group entry is found by comparing lower-cased names with the known group ids.
    """
    data = _unwrap(_load(status_body, "/api/cluster_status"), "/api/cluster_status")
    report = (data.get("clusterStatus") or {}).get("loadMetricsReport") or {}
    usage = report.get("usage") or {}
    ids = {g.placement_group_id.lower() for g in groups if g.state == "CREATED"}
    out: list[Sample | None] = []
    for resource in ("GPU", "CPU"):
        pair = usage.get(resource)
        if not isinstance(pair, list) or len(pair) != 2:
            continue
        used_total = float(pair[0])
        reserved = 0.0
        reserved_used = 0.0
        prefix = f"{resource.lower()}group"
        for name, value in usage.items():
            lowered = str(name).lower()
            if lowered.startswith(prefix) and lowered[len(prefix) :] in ids:
                reserved += float(value[1])
                reserved_used += float(value[0])
        in_use = used_total - reserved + reserved_used
        out.append(make_sample("ray.cluster.resources_reserved", reserved, {"resource": resource}))
        out.append(make_sample("ray.cluster.resources_in_use", in_use, {"resource": resource}))
    return [s for s in out if s is not None]


Resources = tuple[tuple[str, float], ...]
# Each distinct bundle of a placement group and how many of it (counts, never expanded: the
# counts are the dashboard's to write).
BundleShape = tuple[tuple[Resources, int], ...]


@dataclass(frozen=True, slots=True)
class PendingDemand:
    """Pending placement groups of one bundle shape and strategy, as the autoscaler counts them."""

    shape: BundleShape
    strategy: str
    groups: int


@_dashboard_answer("/api/cluster_status")
def pending_strategies(status_body: str | bytes) -> list[PendingDemand]:
    """Return the pending group demands in `/api/cluster_status` with their strategies.

    The placement-group API leaves `strategy` empty for pending groups in Ray 2.60; the
    autoscaler's `pgDemand` ([demand, count] pairs) carries it with the bundles ([resources,
    count] pairs), which identify the group by shape.
    """
    data = _unwrap(_load(status_body, "/api/cluster_status"), "/api/cluster_status")
    report = (data.get("clusterStatus") or {}).get("loadMetricsReport") or {}
    out = []
    for item in report.get("pgDemand") or []:
        demand, groups = _counted(item)
        if not isinstance(demand, Mapping):
            continue
        shape = _bundle_shape(_counted(bundle) for bundle in demand.get("bundles") or [])
        out.append(PendingDemand(shape, str(demand.get("strategy", "")), groups))
    return out


def _counted(item: Any) -> tuple[Any, int]:
    """Split a `[thing, count]` pair (a bare thing counts once)."""
    if isinstance(item, list) and item:
        return item[0], int(item[1]) if len(item) > 1 else 1
    return item, 1


def _shape(resources: Mapping[str, Any]) -> Resources:
    return tuple(sorted((str(k), float(v)) for k, v in resources.items() if float(v)))


def _bundle_shape(bundles: Iterable[tuple[Mapping[str, Any], int]]) -> BundleShape:
    counts: dict[Resources, int] = defaultdict(int)
    for resources, count in bundles:
        counts[_shape(resources)] += count
    return tuple(sorted(counts.items()))


def with_strategies(
    groups: list[dict[str, Any]], demands: list[PendingDemand]
) -> list[dict[str, Any]]:
    """Fill the blank strategy of pending groups from the demands of the same bundle shape."""
    left = [d.groups for d in demands]
    for group in groups:
        if group.get("strategy"):
            continue
        shape = _bundle_shape((bundle, 1) for bundle in group.get("bundles") or [])
        index = next((i for i, d in enumerate(demands) if d.shape == shape and left[i] > 0), None)
        if index is not None:
            group["strategy"] = demands[index].strategy
            left[index] -= 1
    return groups
