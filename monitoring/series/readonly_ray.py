"""PromQL of a read-only Ray cluster's series (monitoring.series.readonly).

The selector names the cluster's exporters (e.g. `{job="ray"}`: one scrape target per node);
a node is Prometheus' `instance`, as a poll names it by its exporter address. Families and the
labels kept come from monitoring.scrape.ray.
"""

from __future__ import annotations

from collections.abc import Sequence

from monitoring.scrape import ray

from .promql import Matcher, vector
from .readonly import Build, Promql, aggregate, counter_rate, either, histogram_keys, series

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


PROMQL = Promql(_table())
