"""Target kinds as the web app sees them: one registry entry per kind.

An entry names the kind's charts, its tile values and tile template, its page panels, its
default alert rules and the extra state its page refreshes. Views, selectors, services and
templates look the kind up here instead of branching on "vllm" or "ray"; the scrape side of a
kind (extractor, series keys) is `monitoring.scrape.kinds.REGISTRY`, under the same name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.utils.module_loading import import_string

from monitoring import charts
from monitoring.models import Comparison, Target, TargetKind

Getter = Callable[[str], float | None]


@dataclass(frozen=True, slots=True)
class RuleSpec:
    name: str
    series: str
    comparison: str
    threshold: float
    duration_s: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleContext:
    """What a kind's default rules may depend on (the linked decision's TTFT target)."""

    ttft_threshold_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Kind:
    """One kind of target in the web app.

    `charts(lines)` lists the page's charts (`lines`: the plan's and SLO's lines, where known);
    `tiles(get, fresh)` computes the overview tile's values from the target's latest values;
    `totals` are the tile values summed into the fleet totals; `state` is the dotted path of a
    function(target) -> dict for the page's refreshed state (stored under the kind's name).
    """

    name: str
    charts: Callable[[charts.ChartLines], list[charts.Chart]]
    tiles: Callable[[Getter, bool], dict[str, float | None]]
    default_rules: Callable[[RuleContext], list[RuleSpec]]
    tile_template: str
    panels_template: str
    totals: tuple[str, ...] = ()
    state: str = ""
    # Dotted path of a function(target, samples, info) -> extra samples, run by the poller.
    poll_extras: str = ""
    busy_key: str = ""  # a latest value that makes an "up" tile need attention when positive

    @property
    def label(self) -> str:
        return str(TargetKind(self.name).label)

    def page_state(self, target: Target) -> dict[str, Any] | None:
        return import_string(self.state)(target) if self.state else None

    def extra_samples(self, target: Target, samples: list[Any], info: dict[str, Any]) -> list[Any]:
        return import_string(self.poll_extras)(target, samples, info) if self.poll_extras else []


DOWN_RULE = RuleSpec("Target down for 3 polls", "poll.consecutive_failures", Comparison.GE, 3, 0)


# --- vLLM -------------------------------------------------------------------------------------


def _vllm_tiles(get: Getter, fresh: bool) -> dict[str, float | None]:
    prompt, generation = get("vllm.prompt_tokens_per_s"), get("vllm.generation_tokens_per_s")
    ttft = get("vllm.ttft_seconds.p95")
    completion = get("vllm.completion_ratio")
    return {
        "tokens_per_s": (
            None if prompt is None and generation is None else (prompt or 0) + (generation or 0)
        ),
        "generation_tokens_per_s": generation,
        "requests_running": get("vllm.requests_running"),
        "requests_waiting": get("vllm.requests_waiting"),
        "kv_cache_usage_pct": get("vllm.kv_cache_usage_pct"),
        "ttft_p95_ms": None if ttft is None else ttft * 1000.0,
        "completion_pct": None if completion is None else completion * 100.0,
    }


def _vllm_rules(ctx: RuleContext) -> list[RuleSpec]:
    ttft = ctx.ttft_threshold_s
    return [
        DOWN_RULE,
        RuleSpec(
            "KV cache above 90 % for 5 min", "vllm.kv_cache_usage_pct", Comparison.GT, 90, 300
        ),
        RuleSpec("Requests waiting for 2 min", "vllm.requests_waiting", Comparison.GT, 0, 120),
        RuleSpec("Preemptions", "vllm.preemptions_per_s", Comparison.GT, 0, 0),
        RuleSpec(f"TTFT p95 above {ttft:g} s", "vllm.ttft_seconds.p95", Comparison.GT, ttft, 60),
    ]


# --- Ray --------------------------------------------------------------------------------------


def _ray_tiles(get: Getter, fresh: bool) -> dict[str, float | None]:
    used = get('ray.cluster.resources_used{resource="GPU"}')
    available = get('ray.cluster.resources_available{resource="GPU"}')
    pending = get('ray.placement_groups{state="PENDING"}')
    return {
        "gpus_used": used,
        "gpus_total": None if used is None or available is None else used + available,
        "nodes": get("ray.cluster.nodes_scraped"),
        "placement_groups_pending": pending if pending is not None else (0.0 if fresh else None),
        "serve_ongoing_requests": get("ray.serve.ongoing_http_requests"),
    }


def _ray_rules(ctx: RuleContext) -> list[RuleSpec]:
    return [
        DOWN_RULE,
        RuleSpec(
            "Placement group pending for 5 min",
            'ray.placement_groups{state="PENDING"}',
            Comparison.GT,
            0,
            300,
        ),
        RuleSpec(
            "Ray node lost (fewer nodes than the inventory or plan expects)",
            "ray.cluster.nodes_missing",
            Comparison.GT,
            0,
            0,
        ),
    ]


# --- GPU exporters ----------------------------------------------------------------------------

# Default thresholds: memory nearly full, the slowdown temperature of most data-centre GPUs.
GPU_MEMORY_FULL_PCT = 95.0
GPU_HOT_C = 85.0


# The tile shows these per-machine series (`gpu.machine.<name>`), under the same names.
GPU_TILE_VALUES = (
    "gpus",
    "gpus_busy",
    "gpus_idle",
    "gpus_stuck",
    "gpus_throttled",
    "utilization_pct",
    "memory_used_mib",
    "memory_total_mib",
    "temperature_max_c",
)


def _gpu_tiles(get: Getter, fresh: bool) -> dict[str, float | None]:
    return {name: get(f"gpu.machine.{name}") for name in GPU_TILE_VALUES}


def _gpu_rules(ctx: RuleContext) -> list[RuleSpec]:
    return [
        DOWN_RULE,
        RuleSpec(
            f"GPU memory above {GPU_MEMORY_FULL_PCT:g} % for 5 min",
            "gpu.memory_used_pct",
            Comparison.GT,
            GPU_MEMORY_FULL_PCT,
            300,
        ),
        RuleSpec(
            f"GPU temperature above {GPU_HOT_C:g} C for 2 min",
            "gpu.temperature_c",
            Comparison.GT,
            GPU_HOT_C,
            120,
        ),
        RuleSpec("GPU XID error", "gpu.xid_last", Comparison.GT, 0, 0),
        RuleSpec(
            "GPU memory full but idle for 10 min (stuck process)",
            "gpu.machine.gpus_stuck",
            Comparison.GT,
            0,
            600,
        ),
        RuleSpec(
            "GPUs idle while the plan expects them busy (10 min)",
            "gpu.machine.gpus_idle_planned",
            Comparison.GT,
            0,
            600,
        ),
    ]


REGISTRY: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            name=TargetKind.VLLM,
            charts=charts.vllm_charts,
            tiles=_vllm_tiles,
            default_rules=_vllm_rules,
            tile_template="monitoring/partials/tiles/vllm.html",
            panels_template="monitoring/partials/panels/vllm.html",
            totals=("tokens_per_s", "requests_running", "requests_waiting"),
            busy_key="vllm.requests_waiting",
        ),
        Kind(
            name=TargetKind.RAY,
            charts=lambda lines: charts.ray_charts(),
            tiles=_ray_tiles,
            default_rules=_ray_rules,
            tile_template="monitoring/partials/tiles/ray.html",
            panels_template="monitoring/partials/panels/ray.html",
            totals=("gpus_used", "gpus_total"),
            state="monitoring.selectors.ray_state",
            poll_extras="monitoring.machines.cluster_nodes.poll_extras",
        ),
        Kind(
            name=TargetKind.GPU,
            charts=charts.gpu_charts,
            tiles=_gpu_tiles,
            default_rules=_gpu_rules,
            tile_template="monitoring/partials/tiles/gpu.html",
            panels_template="monitoring/partials/panels/gpu.html",
            totals=("gpus", "gpus_busy", "gpus_idle", "memory_used_mib", "memory_total_mib"),
            state="monitoring.machines.overview.gpu_state",
            poll_extras="monitoring.machines.overview.poll_extras",
            busy_key="gpu.machine.gpus_stuck",
        ),
    )
}


def get(name: str) -> Kind:
    return REGISTRY[name]
