"""Plan vs reality: what a linked saved plan predicted next to what the target shows.

Reads planner.models.Plan (a frozen engine result) by id. The engine's result shape belongs to
the planner; this looks up a few named numbers in it and shows nothing it cannot find.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from django.utils.translation import gettext_lazy as _

from monitoring.models import Target

# (row label, unit, planned result key, observed latest key, scale of the observed value)
ROWS = (
    (
        _("Concurrent requests"),
        _("requests"),
        "max_concurrency_per_replica",
        "vllm.requests_running",
        1.0,
    ),
    (
        _("Output throughput"),
        _("tok/s"),
        "output_throughput_tok_s",
        "vllm.generation_tokens_per_s",
        1.0,
    ),
    (
        _("KV-cache capacity"),
        _("tokens"),
        "kv_tokens_per_replica",
        "vllm.kv_cache_capacity_tokens",
        1.0,
    ),
    (_("TTFT (p95 observed)"), _("ms"), "ttft_ms", "vllm.ttft_seconds.p95", 1000.0),
    (
        _("Inter-token latency (p95 observed)"),
        _("ms"),
        "itl_ms",
        "vllm.inter_token_latency_seconds.p95",
        1000.0,
    ),
)


def _walk(data: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield str(key), value
            yield from _walk(value)
    elif isinstance(data, list):
        for item in data:
            yield from _walk(item)


def find_number(result: Any, key: str) -> float | None:
    """Return the first number stored under `key` anywhere in a plan result."""
    for name, value in _walk(result):
        if name == key and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def linked_plan(target: Target) -> Any | None:
    """Return the saved plan the target implements, or None."""
    return target.plan if target.plan_id else None


def plan_vs_reality(target: Target) -> dict[str, Any] | None:
    """Return planned vs observed rows for a target linked to a plan, or None."""
    plan = linked_plan(target)
    if plan is None:
        return None
    result = getattr(plan, "result", None) or {}
    latest = target.latest or {}
    rows = []
    for label, unit, planned_key, observed_key, scale in ROWS:
        planned = find_number(result, planned_key)
        observed = latest.get(observed_key)
        rows.append(
            {
                "label": label,
                "unit": unit,
                "planned": planned,
                "observed": None if observed is None else observed * scale,
            }
        )
    return {"plan": plan, "rows": rows}
