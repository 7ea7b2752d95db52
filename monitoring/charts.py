"""The charts of each dashboard: series, title, unit, trace names and empty-state text.

Defined once here (translatable) and rendered as data-* attributes that
static/monitoring/dashboard.js reads; no inline script.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_lazy as _

RATE_NEEDS_TWO = _("Rates need two successive polls of a running server; none in this range yet.")
NO_SAMPLES = _("No samples in this range: the target was not polled successfully yet.")


@dataclass(frozen=True, slots=True, kw_only=True)
class RefLine:
    """A horizontal reference line on a chart, in the chart's displayed unit."""

    y: float
    name: Any
    kind: str = "plan"  # plan (dashed blue) | slo (solid red)

    def as_dict(self) -> dict[str, Any]:
        return {"y": self.y, "name": str(self.name), "kind": self.kind}


@dataclass(frozen=True, slots=True, kw_only=True)
class ChartLines:
    """Reference lines of a vLLM target's charts from its plan and decision (None: no line)."""

    kv_plan_pct: float | None = None
    ttft_plan_ms: float | None = None
    ttft_slo_ms: float | None = None
    itl_plan_ms: float | None = None
    itl_slo_ms: float | None = None
    gpu_memory_alert_pct: float | None = None  # the target's GPU memory alert rule


def _lines(plan: float | None, slo: float | None, plan_name: Any) -> tuple[RefLine, ...]:
    out = []
    if plan is not None:
        out.append(RefLine(y=plan, name=plan_name))
    if slo is not None:
        out.append(RefLine(y=slo, name=_("SLO p95"), kind="slo"))
    return tuple(out)


@dataclass(frozen=True)
class Chart:
    id: str
    title: Any
    unit: Any
    series: tuple[str, ...]
    names: dict[str, Any] = field(default_factory=dict)
    empty: Any = NO_SAMPLES
    kind: str = "line"  # line | heatmap (last poll, from the state) | timeheat (label x time)
    scale: float = 1.0
    stack: bool = False
    label: str = ""  # which label names a trace (besides the series name)
    field: str = ""  # heatmaps: the field of the state JSON
    lines: tuple[RefLine, ...] = ()

    def attrs(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": str(self.title),
            "unit": str(self.unit),
            "series": ",".join(self.series),
            "names": json.dumps({k: str(v) for k, v in self.names.items()}),
            "empty": str(self.empty),
            "kind": self.kind,
            "scale": self.scale,
            "stack": self.stack,
            "label": self.label,
            "field": self.field,
            "lines": json.dumps([line.as_dict() for line in self.lines]) if self.lines else "",
        }


def _q(key: str, what: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    series = tuple(f"{key}.{q}" for q in ("p50", "p95", "p99"))
    return series, {s: f"{what} {s.rsplit('.', 1)[1]}" for s in series}


OVERVIEW = (
    Chart(
        "chart-fleet-tokens",
        _("Fleet tokens per second"),
        _("tok/s"),
        ("vllm.generation_tokens_per_s", "vllm.prompt_tokens_per_s"),
        {"vllm.generation_tokens_per_s": _("generated"), "vllm.prompt_tokens_per_s": _("prompt")},
        RATE_NEEDS_TWO,
    ),
    Chart(
        "chart-fleet-requests",
        _("Fleet requests running and waiting"),
        _("requests"),
        ("vllm.requests_running", "vllm.requests_waiting"),
        {"vllm.requests_running": _("running"), "vllm.requests_waiting": _("waiting")},
        _("No vLLM target was polled successfully in this range."),
    ),
)


FLEET_GPUS = Chart(
    "chart-fleet-gpus",
    _("Fleet GPUs busy and idle (GPU exporters)"),
    _("GPUs"),
    ("gpu.machine.gpus_busy", "gpu.machine.gpus_idle"),
    {"gpu.machine.gpus_busy": _("busy"), "gpu.machine.gpus_idle": _("idle")},
    _("No GPU exporter was polled successfully in this range."),
    stack=True,
)
OVERVIEW = (*OVERVIEW, FLEET_GPUS)
MACHINES = (
    FLEET_GPUS,
    Chart(
        "chart-fleet-gpu-memory",
        _("Fleet GPU memory used"),
        _("GiB"),
        ("gpu.machine.memory_used_mib",),
        {"gpu.machine.memory_used_mib": _("used")},
        _("No GPU exporter was polled successfully in this range."),
        scale=1 / 1024,
    ),
    Chart(
        "chart-fleet-gpu-stuck",
        _("GPUs with memory full but idle, and throttled"),
        _("GPUs"),
        ("gpu.machine.gpus_stuck", "gpu.machine.gpus_throttled", "gpu.machine.gpus_xid"),
        {
            "gpu.machine.gpus_stuck": _("memory full, idle"),
            "gpu.machine.gpus_throttled": _("throttled"),
            "gpu.machine.gpus_xid": _("XID error"),
        },
        _("No GPU exporter was polled successfully in this range."),
    ),
)


def vllm_charts(lines: ChartLines | None = None) -> list[Chart]:
    """Return the vLLM dashboard's charts, with the plan's and the SLO's lines where known."""
    lines = lines or ChartLines()
    ttft, ttft_names = _q("vllm.ttft_seconds", "TTFT")
    itl, itl_names = _q("vllm.inter_token_latency_seconds", _("inter-token"))
    e2e, e2e_names = _q("vllm.e2e_latency_seconds", _("end-to-end"))
    latency_empty = _(
        "No request finished between two polls in this range: latency quantiles come from "
        "histogram changes between polls."
    )
    return [
        Chart(
            "chart-tokens",
            _("Prompt and generation tokens per second"),
            _("tok/s"),
            ("vllm.prompt_tokens_per_s", "vllm.generation_tokens_per_s"),
            {
                "vllm.prompt_tokens_per_s": _("prompt"),
                "vllm.generation_tokens_per_s": _("generated"),
            },
            RATE_NEEDS_TWO,
        ),
        Chart(
            "chart-requests",
            _("Requests running vs waiting"),
            _("requests"),
            ("vllm.requests_running", "vllm.requests_waiting"),
            {"vllm.requests_running": _("running"), "vllm.requests_waiting": _("waiting")},
        ),
        Chart(
            "chart-kv",
            _("KV-cache usage"),
            _("%"),
            ("vllm.kv_cache_usage_pct",),
            {"vllm.kv_cache_usage_pct": _("KV cache used")},
            lines=_lines(lines.kv_plan_pct, None, _("plan's capacity for this replica")),
        ),
        Chart(
            "chart-ttft",
            _("Time to first token"),
            _("ms"),
            ttft,
            ttft_names,
            latency_empty,
            scale=1000,
            lines=_lines(lines.ttft_plan_ms, lines.ttft_slo_ms, _("plan's prediction")),
        ),
        Chart(
            "chart-itl",
            _("Inter-token latency"),
            _("ms"),
            itl,
            itl_names,
            latency_empty,
            scale=1000,
            lines=_lines(lines.itl_plan_ms, lines.itl_slo_ms, _("plan's prediction")),
        ),
        Chart("chart-e2e", _("End-to-end request latency"), _("s"), e2e, e2e_names, latency_empty),
        Chart(
            "chart-prefix",
            _("Prefix-cache hit rate"),
            _("%"),
            ("vllm.prefix_cache_hit_ratio",),
            {"vllm.prefix_cache_hit_ratio": _("hit rate")},
            _("No prefix-cache lookups between two polls (prefix caching off, or no traffic)."),
            scale=100,
        ),
        Chart(
            "chart-preemptions",
            _("Preemptions per second"),
            _("1/s"),
            ("vllm.preemptions_per_s",),
            {"vllm.preemptions_per_s": _("preemptions")},
            RATE_NEEDS_TWO,
        ),
        Chart(
            "chart-finished",
            _("Finished requests by reason"),
            _("req/s"),
            ("vllm.requests_finished_per_s",),
            {"vllm.requests_finished_per_s": ""},
            RATE_NEEDS_TWO,
            stack=True,
            label="finished_reason",
        ),
    ]


def utilization_history(chart_id: str, title: Any, key: str, empty: Any) -> Chart:
    """A time x GPU heatmap of a per-GPU utilisation key (sequential scale, light at 0 %)."""
    return Chart(chart_id, title, _("%"), (key,), empty=empty, kind="timeheat", label="gpu")


def ray_charts() -> list[Chart]:
    return [
        *_ray_gpu_charts(),
        _ray_resource_chart(
            "GPU",
            _("GPUs: reserved or used (ray_resources) vs actually in use (ray status)"),
            _("GPUs"),
            _("The cluster reports no GPU resources."),
        ),
        _ray_resource_chart(
            "CPU",
            _("CPUs: reserved or used (ray_resources) vs actually in use (ray status)"),
            _("CPUs"),
            _("The cluster reports no CPU resources."),
        ),
        *_ray_node_charts(),
        *_ray_state_charts(),
        *_ray_serve_charts(),
    ]


def _ray_gpu_charts() -> list[Chart]:
    """Each node's GPUs as Ray reads them: utilization and memory, last poll and history."""
    no_gpu = _(
        "No GPU readings: Ray reports GPU utilization and memory only on nodes with a real "
        "NVIDIA or AMD driver (fake --num-gpus gives resources, not readings)."
    )
    return [
        Chart(
            "chart-gpu-heatmap",
            _("GPU utilization per node and GPU (last poll)"),
            _("%"),
            (),
            empty=no_gpu,
            kind="heatmap",
            field="gpu_utilization_pct",
        ),
        utilization_history(
            "chart-ray-gpu-history",
            _("GPU utilization per node and GPU over time"),
            "ray.node.gpu_utilization_pct",
            no_gpu,
        ),
        Chart(
            "chart-gpu-memory-heatmap",
            _("GPU memory used per node and GPU (last poll)"),
            _("MiB"),
            (),
            empty=no_gpu,
            kind="heatmap",
            field="gpu_memory_used_mib",
        ),
    ]


def _ray_resource_chart(resource: str, title: Any, unit: Any, empty: Any) -> Chart:
    """One Ray resource: reserved or used, actually in use, held by placement groups, free."""
    used, in_use, reserved, available = (
        f'ray.cluster.{state}{{resource="{resource}"}}'
        for state in (
            "resources_used",
            "resources_in_use",
            "resources_reserved",
            "resources_available",
        )
    )
    return Chart(
        f"chart-{resource.lower()}s",
        title,
        unit,
        (used, in_use, reserved, available),
        {
            used: _("reserved or used"),
            in_use: _("actually in use"),
            reserved: _("reserved by placement groups"),
            available: _("available"),
        },
        empty,
    )


def _ray_node_charts() -> list[Chart]:
    """The nodes answering, and each node's CPU and memory."""
    return [
        Chart(
            "chart-nodes",
            _("Nodes answering vs expected"),
            _("nodes"),
            ("ray.cluster.nodes_scraped", "ray.cluster.nodes_expected"),
            {
                "ray.cluster.nodes_scraped": _("answering"),
                "ray.cluster.nodes_expected": _("expected"),
            },
        ),
        Chart(
            "chart-cpu",
            _("CPU utilization per node"),
            _("%"),
            ("ray.node.cpu_utilization_pct",),
            {"ray.node.cpu_utilization_pct": ""},
            label="node",
        ),
        Chart(
            "chart-memory",
            _("Memory used per node"),
            _("GiB"),
            ("ray.node.memory_used_bytes",),
            {"ray.node.memory_used_bytes": ""},
            scale=1 / 1024**3,
            label="node",
        ),
    ]


def _ray_state_charts() -> list[Chart]:
    """Placement groups, actors and tasks by state."""
    return [
        Chart(
            "chart-placement-groups",
            _("Placement groups by state"),
            _("groups"),
            ("ray.placement_groups",),
            {"ray.placement_groups": ""},
            _("No placement group was ever created: Ray exports this family only after one is."),
            label="state",
        ),
        Chart(
            "chart-actors",
            _("Actors by state (counted once, by the GCS)"),
            _("actors"),
            ("ray.actors",),
            {"ray.actors": ""},
            _("No actor exists yet: Ray exports this family only after one is created."),
            label="state",
        ),
        Chart(
            "chart-tasks",
            _("Tasks by state"),
            _("tasks"),
            ("ray.tasks",),
            {"ray.tasks": ""},
            _("No task was submitted yet: Ray exports this family only after one is."),
            label="state",
        ),
    ]


def _ray_serve_charts() -> list[Chart]:
    """Ray Serve's HTTP traffic: requests per second, latency, requests in flight."""
    return [
        Chart(
            "chart-serve-requests",
            _("Serve HTTP requests per second"),
            _("req/s"),
            ("ray.serve.http_requests_per_s",),
            {"ray.serve.http_requests_per_s": ""},
            _("No Ray Serve traffic in this range (no application, or rates need two polls)."),
            label="application",
        ),
        Chart(
            "chart-serve-latency",
            _("Serve HTTP latency p95"),
            _("ms"),
            ("ray.serve.http_latency_ms.p95",),
            {"ray.serve.http_latency_ms.p95": ""},
            _("No Ray Serve request finished between two polls in this range."),
            label="application",
        ),
        Chart(
            "chart-serve-ongoing",
            _("Serve requests in flight"),
            _("requests"),
            ("ray.serve.ongoing_http_requests",),
            {"ray.serve.ongoing_http_requests": _("ongoing")},
            _("No Ray Serve proxy reports requests in this range."),
        ),
    ]


def gpu_charts(lines: ChartLines | None = None) -> list[Chart]:
    """Charts of one machine's GPU exporter, one trace (or heatmap row) per GPU.

    The memory chart draws the threshold of the target's GPU memory alert rule, where it has one.
    """
    alert = (lines or ChartLines()).gpu_memory_alert_pct
    no_gpu = _(
        "No GPU reading in this range: the exporter answered without GPU series, or it was "
        "not polled successfully yet."
    )
    return [
        utilization_history(
            "chart-gpu-util-history",
            _("GPU utilization over time (one row per GPU)"),
            "gpu.utilization_pct",
            no_gpu,
        ),
        Chart(
            "chart-gpu-util",
            _("GPU utilization per GPU"),
            _("%"),
            ("gpu.utilization_pct",),
            {"gpu.utilization_pct": _("GPU")},
            no_gpu,
            label="gpu",
        ),
        Chart(
            "chart-gpu-memory",
            _("GPU memory used per GPU"),
            _("%"),
            ("gpu.memory_used_pct",),
            {"gpu.memory_used_pct": _("GPU")},
            no_gpu,
            label="gpu",
            lines=() if alert is None else (RefLine(y=alert, name=_("alert line"), kind="slo"),),
        ),
        Chart(
            "chart-gpu-temperature",
            _("GPU temperature"),
            _("°C"),
            ("gpu.temperature_c",),
            {"gpu.temperature_c": _("GPU")},
            no_gpu,
            label="gpu",
        ),
        Chart(
            "chart-gpu-power",
            _("GPU power draw"),
            _("W"),
            ("gpu.power_w",),
            {"gpu.power_w": _("GPU")},
            no_gpu,
            label="gpu",
        ),
        Chart(
            "chart-gpu-counts",
            _("GPUs busy, idle, stuck and throttled"),
            _("GPUs"),
            (
                "gpu.machine.gpus_busy",
                "gpu.machine.gpus_idle",
                "gpu.machine.gpus_stuck",
                "gpu.machine.gpus_throttled",
            ),
            {
                "gpu.machine.gpus_busy": _("busy"),
                "gpu.machine.gpus_idle": _("idle"),
                "gpu.machine.gpus_stuck": _("memory full, idle"),
                "gpu.machine.gpus_throttled": _("throttled"),
            },
            no_gpu,
        ),
    ]
