"""PromQL of a read-only Ray cluster's series (monitoring.series.readonly).

The selector names the cluster's exporters (e.g. `{job="ray"}`: one scrape target per node);
a node is Prometheus' `instance`, as a poll names it by its exporter address. Families and the
labels kept come from monitoring.scrape.ray.

What a poll keeps in `info` from exporter labels (FACTS) is read from the same families: GPU
names (`ray_node_gpus_available`), the session, and each node's `ip` and head flag (the node
gauges), so node names resolve through the inventory as for a polled cluster. The dashboard is
not asked: no host names, no node Ray lists as DEAD, no pending group's name, reason or bundles
and no placement-group reservations (real Ray exports none of these as metrics; the pending
groups are counted from `ray_placement_groups`). monitoring.selectors.ray_state says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from monitoring.scrape import ray
from monitoring.series.promql import Matcher, vector
from monitoring.series.readonly.builders import (
    Build,
    Facts,
    Promql,
    aggregate,
    counter_rate,
    either,
    histogram_keys,
    series,
)

NODE = {"node": "instance"}
NODE_GPU = {"node": "instance", "gpu": "GpuIndex"}
# Placement-group bookkeeping and per-node marker resources are not resources.
REAL_RESOURCE = Matcher("Name", "!~", "|.*_group_.*|node:.*")


def _named(labels: Sequence[str]) -> dict[str, str]:
    return {n: n for n in labels}


def _gauge(family: str, renames: dict[str, str], how: str = "sum") -> Build:
    return lambda sel, w: series(family, sel, renames, how)


def _resources(state: str, renames: dict[str, str]) -> Build:
    def build(sel: Sequence[Matcher], w: str) -> str:
        matchers = [*sel, Matcher("State", "=", state), REAL_RESOURCE]
        return series(ray.RESOURCES, matchers, {**renames, "resource": "Name"})

    return build


def _one_source(family: str) -> Build:
    """States counted from the GCS's view when it reports (Ray counts actors twice)."""

    def build(sel: Sequence[Matcher], w: str) -> str:
        gcs = [*sel, Matcher("Source", "=", "gcs")]
        return either(
            [
                series(family, gcs, {"state": "State"}),
                series(family, sel, {"state": "State"}),
            ]
        )

    return build


def _counter(family: str) -> list[str]:
    return [family + "_total", family]  # before Ray 2.11 without `_total`


def _http_rate(errors: bool) -> Build:
    def build(sel: Sequence[Matcher], w: str) -> str:
        matchers = [*sel, Matcher("status_code", "!~", "[123].*")] if errors else sel
        family = "ray_serve_num_http_requests"
        return counter_rate(_counter(family), matchers, w, {"application": "application"})

    return build


def _nodes_scraped(sel: Sequence[Matcher], w: str) -> str:
    nodes = vector("", [Matcher("__name__", "=~", "|".join(ray.NODE_GAUGES)), *sel])
    return f"count(count by (instance) ({nodes}))"


def _gpus_reporting(sel: Sequence[Matcher], w: str) -> str:
    readings = vector("ray_node_gpus_utilization", sel)
    return f"count(count by (instance, GpuIndex) ({readings} >= 0))"


def _gpu_gauge(family: str) -> Build:
    """Per node and GPU; a utilisation of -1 (the driver call failed) is no reading."""
    floor = " >= 0" if family == "ray_node_gpus_utilization" else ""
    return lambda sel, w: aggregate(f"{vector(family, sel)}{floor}", NODE_GPU, "avg")


def _table() -> dict[str, Build]:
    table: dict[str, Build] = {
        "poll.up": lambda sel, w: f"max({vector('up', sel)})",
        "scrape.duration_seconds": lambda sel, w: f"max({vector('scrape_duration_seconds', sel)})",
        "ray.cluster.nodes_scraped": _nodes_scraped,
        "ray.cluster.gpus_reporting": _gpus_reporting,
        "ray.node.resources_used": _resources("USED", NODE),
        "ray.node.resources_available": _resources("AVAILABLE", NODE),
        "ray.cluster.resources_used": _resources("USED", {}),
        "ray.cluster.resources_available": _resources("AVAILABLE", {}),
        "ray.placement_groups": _one_source("ray_placement_groups"),
        "ray.actors": _one_source("ray_actors"),
        "ray.tasks": _gauge("ray_tasks", {"state": "State"}),
        "ray.serve.http_requests_per_s": _http_rate(errors=False),
        "ray.serve.http_errors_per_s": _http_rate(errors=True),
        "ray.serve.deployment_requests_per_s": lambda sel, w: counter_rate(
            _counter("ray_serve_deployment_request_counter"),
            sel,
            w,
            _named(("application", "deployment")),
        ),
    }
    for family, (key, how) in ray.NODE_GAUGES.items():
        table[key] = _gauge(family, NODE, "avg" if how == "mean" else "sum")
    for family, key in ray.GPU_GAUGES.items():
        table[key] = _gpu_gauge(family)
    for family, (key, keep) in ray.SERVE_GAUGES.items():
        table[key] = _gauge(family, _named(keep))
    for family, (key, keep) in ray.SERVE_HISTOGRAMS.items():
        table.update(histogram_keys(key, [family], _named(keep)))
    return table


# A node gauge every Ray version's node exporter writes, once per node (with `ip`, IsHeadNode).
NODE_FAMILY = "ray_node_cpu_utilization"


def facts(label_sets: list[dict[str, str]]) -> dict[str, Any]:
    """The `info` a poll keeps from exporter labels (monitoring.scrape.ray.extract and merge):
    {node: {GPU index: device name}}, the sessions, and the nodes by exporter (`instance`)."""
    gpus: dict[str, dict[str, str]] = defaultdict(dict)
    sessions: set[str] = set()
    nodes: dict[str, dict[str, Any]] = {}
    for labels in label_sets:
        node = labels.get("instance", "")
        if labels.get("SessionName"):
            sessions.add(labels["SessionName"])
        if labels.get("__name__") == ray.GPU_PRESENT and node:
            gpus[node].setdefault(labels.get("GpuIndex", ""), labels.get("GpuDeviceName", ""))
        elif labels.get("__name__") == NODE_FAMILY and node:
            nodes.setdefault(
                node,
                {
                    "node_id": "",
                    "ip": labels.get("ip", ""),
                    "hostname": "",  # only the dashboard's node list has it
                    "head": labels.get("IsHeadNode") == "true",
                    "state": "",  # nor says which nodes are DEAD
                    "exporter": node,
                },
            )
    out: dict[str, Any] = {}
    if gpus:
        out["gpus"] = dict(gpus)
    if sessions:
        out["sessions"] = sorted(sessions)
    if nodes:
        out["nodes"] = [nodes[n] for n in sorted(nodes)]
    return out


FACTS = Facts((ray.GPU_PRESENT, NODE_FAMILY), facts)

PROMQL = Promql(_table(), facts=FACTS)
