"""Extract Ray metrics per node and per GPU, and read the dashboard's discovery and state APIs.

One exporter payload is extracted with our own `node` label (the scrape target: Ray's labels do
not identify a node uniquely); a cluster is the merge of its exporters. WorkerId, otel_scope_*
and every label we do not name are summed away.
"""

from __future__ import annotations

import functools
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from .derive import comparable, histogram_delta, histogram_mean, quantiles, rate
from .errors import SourceError
from .parse import MetricFamily, PromSample, parse
from .series import (
    Extracted,
    Histogram,
    RawSnapshot,
    Sample,
    make_sample,
    merge_histograms,
    parse_series_id,
    series_id,
)

KIND = "ray"

# family -> (our key, Ray labels kept -> our label names, how several samples combine)
NODE_GAUGES: dict[str, tuple[str, str]] = {
    "ray_node_cpu_utilization": ("ray.node.cpu_utilization_pct", "mean"),
    "ray_node_cpu_count": ("ray.node.cpu_count", "sum"),
    "ray_node_mem_used": ("ray.node.memory_used_bytes", "sum"),
    "ray_node_mem_available": ("ray.node.memory_available_bytes", "sum"),
    "ray_node_mem_total": ("ray.node.memory_total_bytes", "sum"),
}
# GPU series; gram values are MiB although Ray's help text says bytes.
GPU_GAUGES: dict[str, str] = {
    "ray_node_gpus_utilization": "ray.node.gpu_utilization_pct",
    "ray_node_gram_used": "ray.node.gpu_memory_used_mib",
    "ray_node_gram_available": "ray.node.gpu_memory_available_mib",
}
# One series per GPU the node has (value 1), also when its readings fail: it tells which GPUs
# exist, so a GPU without a reading is a gap on the heatmap rather than a missing column.
GPU_PRESENT = "ray_node_gpus_available"
# Actors are counted twice by Ray (the GCS and each worker's executor): one Source is kept.
# Tasks are counted once by whoever holds the task in that state (owner before it runs, the
# executor while it runs): all Sources are added, as Ray's own dashboard does.
STATE_GAUGES: dict[str, str] = {
    "ray_placement_groups": "ray.placement_groups",
    "ray_actors": "ray.actors",
    "ray_tasks": "ray.tasks",
}
SERVE_GAUGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ray_serve_num_ongoing_http_requests": ("ray.serve.ongoing_http_requests", ()),
    "ray_serve_replica_processing_queries": (
        "ray.serve.replica_processing_queries",
        ("application", "deployment"),
    ),
    "ray_serve_deployment_replica_healthy": (
        "ray.serve.replicas_healthy",
        ("application", "deployment"),
    ),
    "ray_serve_application_status": ("ray.serve.application_status", ("application",)),
    "ray_serve_deployment_status": (
        "ray.serve.deployment_status",
        ("application", "deployment"),
    ),
}
# Counters: before Ray 2.11 without `_total`; the parser names both the same.
SERVE_COUNTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ray_serve_num_http_requests": ("ray.serve.http_requests", ("application", "status_code")),
    "ray_serve_deployment_request_counter": (
        "ray.serve.deployment_requests",
        ("application", "deployment"),
    ),
}
SERVE_HISTOGRAMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ray_serve_http_request_latency_ms": ("ray.serve.http_latency_ms", ("application",)),
    "ray_serve_deployment_processing_latency_ms": (
        "ray.serve.processing_latency_ms",
        ("application", "deployment"),
    ),
}
RESOURCES = "ray_resources"
WANTED: frozenset[str] = frozenset(
    {
        *NODE_GAUGES,
        *GPU_GAUGES,
        GPU_PRESENT,
        *STATE_GAUGES,
        *SERVE_GAUGES,
        *SERVE_COUNTERS,
        *SERVE_HISTOGRAMS,
        RESOURCES,
    }
)
# Status gauges are numeric enums.
APPLICATION_RUNNING = 6
DEPLOYMENT_HEALTHY = 6


def _finite(samples: Iterable[PromSample], warnings: list[str], what: str) -> list[float]:
    values = []
    for s in samples:
        if math.isfinite(s.value):
            values.append(s.value)
        else:
            warnings.append(f"{what}: non-finite value {s.value} ignored")
    return values


def _values(family: MetricFamily) -> list[PromSample]:
    if family.type == "counter":
        return list(family.counter_samples())
    return [s for s in family.samples if not s.name.endswith("_created")]


def _one_source(samples: list[PromSample]) -> list[PromSample]:
    """Keep one `Source`: Ray counts each actor under two (gcs and the executor's view)."""
    sources = {s.labels.get("Source", "") for s in samples}
    if len(sources) <= 1:
        return samples
    chosen = "gcs" if "gcs" in sources else sorted(sources)[0]
    return [s for s in samples if s.labels.get("Source", "") == chosen]


def extract(text: str, ts: float, *, node: str) -> Extracted:
    """Parse one Ray exporter payload taken at `ts`; `node` is our instance label for it."""
    families = parse(text, WANTED)
    warnings: list[str] = []
    gauges: list[Sample | None] = []
    sessions: set[str] = set()
    for fam in families.values():
        for s in fam.samples:
            session = s.labels.get("SessionName")
            if session:
                sessions.add(session)

    for name, (key, how) in NODE_GAUGES.items():
        family = families.get(name)
        if family is None:
            continue
        values = _finite(_values(family), warnings, name)
        if values:
            value = sum(values) / len(values) if how == "mean" else sum(values)
            gauges.append(make_sample(key, value, {"node": node}))

    gpu_names: dict[str, str] = {}
    present = families.get(GPU_PRESENT)
    for s in _values(present) if present is not None else ():
        if math.isfinite(s.value) and s.value > 0:
            gpu_names.setdefault(s.labels.get("GpuIndex", ""), s.labels.get("GpuDeviceName", ""))
    for name, key in GPU_GAUGES.items():
        family = families.get(name)
        if family is None:
            continue
        by_gpu: dict[str, list[float]] = defaultdict(list)
        for s in _values(family):
            gpu = s.labels.get("GpuIndex", "")
            if s.labels.get("GpuDeviceName"):
                gpu_names[gpu] = s.labels["GpuDeviceName"]
            if not math.isfinite(s.value):
                warnings.append(f"{name}: non-finite value for GPU {gpu} ignored")
            elif name == "ray_node_gpus_utilization" and s.value < 0:
                warnings.append(f"{name}: GPU {gpu} on {node} reports -1 (driver call failed)")
            else:
                by_gpu[gpu].append(s.value)
        for gpu, values in by_gpu.items():
            gauges.append(make_sample(key, sum(values) / len(values), {"node": node, "gpu": gpu}))

    resources = families.get(RESOURCES)
    if resources is not None:
        totals: dict[tuple[str, str], float] = defaultdict(float)
        for s in _values(resources):
            resource = s.labels.get("Name", "")
            state = s.labels.get("State", "")
            if "_group_" in resource or resource.startswith("node:") or not resource:
                continue  # placement-group bookkeeping and per-node marker resources
            if math.isfinite(s.value) and state in ("USED", "AVAILABLE"):
                totals[(resource, state)] += s.value
        for (resource, state), value in totals.items():
            key = "ray.node.resources_used" if state == "USED" else "ray.node.resources_available"
            gauges.append(make_sample(key, value, {"node": node, "resource": resource}))

    for name, key in STATE_GAUGES.items():
        family = families.get(name)
        if family is None:
            continue
        by_state: dict[str, float] = defaultdict(float)
        state_samples = _values(family)
        for s in state_samples if name == "ray_tasks" else _one_source(state_samples):
            if math.isfinite(s.value):
                by_state[s.labels.get("State", "")] += s.value
        for state, value in by_state.items():
            gauges.append(make_sample(key, value, {"state": state}))

    for name, (key, keep) in SERVE_GAUGES.items():
        family = families.get(name)
        if family is None:
            continue
        grouped: dict[tuple[tuple[str, str], ...], float] = defaultdict(float)
        for s in _values(family):
            if math.isfinite(s.value):
                grouped[tuple((k, s.labels.get(k, "")) for k in keep)] += s.value
        for labels, value in grouped.items():
            gauges.append(make_sample(key, value, dict(labels)))

    counters: dict[str, float] = {}
    for name, (key, keep) in SERVE_COUNTERS.items():
        family = families.get(name)
        if family is None:
            continue
        summed: dict[str, float] = defaultdict(float)
        for s in family.counter_samples():
            if math.isfinite(s.value):
                summed[series_id(key, {k: s.labels.get(k, "") for k in keep})] += s.value
        counters.update(summed)

    histograms: dict[str, Histogram] = {}
    for name, (key, keep) in SERVE_HISTOGRAMS.items():
        family = families.get(name)
        if family is None or family.type != "histogram":
            continue
        histograms.update(_histograms(family, key, keep))

    info: dict[str, Any] = {}
    if gpu_names:
        info["gpus"] = {node: gpu_names}
    if sessions:
        info["sessions"] = sorted(sessions)
    raw = RawSnapshot(
        kind=KIND,
        ts=ts,
        epoch=",".join(sorted(sessions)) or None,
        counters=counters,
        histograms=histograms,
    )
    return Extracted(
        gauges=[g for g in gauges if g is not None], raw=raw, info=info, warnings=warnings
    )


def _histograms(family: MetricFamily, key: str, keep: tuple[str, ...]) -> dict[str, Histogram]:
    buckets: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, float] = defaultdict(float)
    sums: dict[str, float] = defaultdict(float)
    for s in family.samples:
        if not math.isfinite(s.value):
            continue
        sid = series_id(key, {k: s.labels.get(k, "") for k in keep})
        if s.name.endswith("_bucket"):
            try:
                le = float(s.labels.get("le", "nan"))
            except ValueError:
                continue
            if not math.isnan(le):
                buckets[sid][le] += s.value
        elif s.name.endswith("_count"):
            counts[sid] += s.value
        elif s.name.endswith("_sum"):
            sums[sid] += s.value
    return {
        sid: Histogram(buckets=tuple(sorted(b.items())), count=counts[sid], sum=sums[sid])
        for sid, b in buckets.items()
    }


def merge(parts: Sequence[Extracted], ts: float) -> Extracted:
    """Combine the exporters of one cluster: node series side by side, cluster sums added."""
    gauges: dict[str, Sample] = {}
    sums: dict[str, float] = defaultdict(float)
    counters: dict[str, float] = defaultdict(float)
    hist_parts: dict[str, list[Histogram]] = defaultdict(list)
    sessions: set[str] = set()
    info: dict[str, Any] = {"gpus": {}}
    warnings: list[str] = []
    nodes: set[str] = set()
    for part in parts:
        warnings.extend(part.warnings)
        info["gpus"].update(part.info.get("gpus", {}))
        sessions.update(part.info.get("sessions", []))
        for sample in part.gauges:
            labels = dict(sample.labels)
            if sample.key.startswith("ray.node."):
                gauges[sample.series_id] = sample
                nodes.add(labels["node"])
                if sample.key in ("ray.node.resources_used", "ray.node.resources_available"):
                    cluster_key = sample.key.replace("ray.node.", "ray.cluster.")
                    sums[series_id(cluster_key, {"resource": labels["resource"]})] += sample.value
                elif sample.key == "ray.node.gpu_utilization_pct":
                    sums["ray.cluster.gpus_reporting"] += 1
            else:
                sums[sample.series_id] += sample.value
        for sid, value in part.raw.counters.items():
            counters[sid] += value
        for sid, hist in part.raw.histograms.items():
            hist_parts[sid].append(hist)
    sums["ray.cluster.nodes_scraped"] = float(len(nodes))
    for sid, value in sums.items():
        key, labels = parse_series_id(sid)
        total = make_sample(key, value, labels)
        if total is not None:
            gauges[sid] = total
    if not info["gpus"]:
        del info["gpus"]
    if sessions:
        info["sessions"] = sorted(sessions)
    raw = RawSnapshot(
        kind=KIND,
        ts=ts,
        epoch=",".join(sorted(sessions)) or None,
        counters=dict(counters),
        histograms={sid: merge_histograms(h) for sid, h in hist_parts.items()},
    )
    return Extracted(gauges=list(gauges.values()), raw=raw, info=info, warnings=warnings)


def derive(previous: RawSnapshot | None, current: RawSnapshot) -> list[Sample]:
    """Return Serve request rates and latency quantiles between two cluster snapshots."""
    elapsed = comparable(previous, current)
    if previous is None or elapsed is None:
        return []
    out: list[Sample | None] = []
    http_total: dict[str, float] = defaultdict(float)
    http_errors: dict[str, float] = defaultdict(float)
    for sid, value in current.counters.items():
        r = rate(previous.counters.get(sid), value, elapsed)
        if r is None:
            continue
        key, labels = parse_series_id(sid)
        if key == "ray.serve.http_requests":
            app = labels.get("application", "")
            http_total[app] += r
            if not labels.get("status_code", "").startswith(("1", "2", "3")):
                http_errors[app] += r
        elif key == "ray.serve.deployment_requests":
            out.append(make_sample("ray.serve.deployment_requests_per_s", r, labels))
    for app, value in http_total.items():
        out.append(make_sample("ray.serve.http_requests_per_s", value, {"application": app}))
        out.append(
            make_sample("ray.serve.http_errors_per_s", http_errors[app], {"application": app})
        )
    for sid, hist in current.histograms.items():
        delta = histogram_delta(previous.histograms.get(sid), hist)
        key, labels = parse_series_id(sid)
        for name, value in quantiles(delta).items():
            out.append(make_sample(f"{key}.{name}", value, labels))
        mean = histogram_mean(delta)
        if mean is not None:
            out.append(make_sample(f"{key}.mean", mean, labels))
    return [s for s in out if s is not None]


# --- dashboard JSON ---------------------------------------------------------------------------


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
