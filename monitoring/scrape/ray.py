"""Extract Ray metrics per node and per GPU, and read the dashboard's discovery and state APIs.

One exporter payload is extracted with our own `node` label (the scrape target: Ray's labels do
not identify a node uniquely); a cluster is the merge of its exporters. WorkerId, otel_scope_*
and every label we do not name are summed away.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from .derive import comparable, histogram_delta, histogram_mean, quantiles, rate
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
