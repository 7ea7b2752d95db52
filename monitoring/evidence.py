"""Fill a decision record's evidence from what a target measured over a time window.

Writes go through the planner's `record_evidence_measurement` (source "monitoring", with the
window), the one entry point the decisions app offers for this.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

from monitoring.models import Rollup, Sample, Target
from monitoring.retention import rolled_up_to


@dataclass(frozen=True, slots=True)
class Measured:
    kind: str  # the decision's evidence kind
    value: float
    unit: str
    note: str


def _values(target: Target, key: str, start: datetime, end: datetime) -> list[tuple[Any, float]]:
    """Return (time, value) of a series in the window: rollups before the cursor, raw after."""
    cursor = rolled_up_to()
    out: list[tuple[Any, float]] = []
    raw_from = start
    if cursor is not None and cursor > start:
        raw_oldest = (
            Sample.objects.filter(target=target, series=key, labels="")
            .order_by("ts")
            .values_list("ts", flat=True)
            .first()
        )
        if raw_oldest is None or raw_oldest > start:
            raw_from = min(cursor, end)
            out.extend(
                Rollup.objects.filter(
                    target=target, series=key, labels="", minute__gte=start, minute__lt=raw_from
                ).values_list("minute", "avg")
            )
    out.extend(
        Sample.objects.filter(
            target=target, series=key, labels="", ts__gte=raw_from, ts__lte=end
        ).values_list("ts", "value")
    )
    return [(t, v) for t, v in out if math.isfinite(v)]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def measure_window(target: Target, start: datetime, end: datetime) -> list[Measured]:
    """Return TTFT p95, inter-token p95 (ms) and completion rate (%) over the window."""
    out: list[Measured] = []
    for kind, key in (
        ("ttft_p95", "vllm.ttft_seconds.p95"),
        ("itl_p95", "vllm.inter_token_latency_seconds.p95"),
    ):
        values = [v for _, v in _values(target, key, start, end)]
        if values:
            out.append(
                Measured(
                    kind,
                    _p95(values) * 1000.0,
                    "ms",
                    f"95th percentile of {len(values)} per-poll p95 values of {key} "
                    f"on {target.name}",
                )
            )
    ratios = dict(_values(target, "vllm.completion_ratio", start, end))
    weights: dict[Any, float] = defaultdict(float)
    weights.update(dict(_values(target, "vllm.requests_per_s", start, end)))
    total = sum(weights[t] for t in ratios)
    if ratios and total > 0:
        rate = sum(ratios[t] * weights[t] for t in ratios) / total
        out.append(
            Measured(
                "completion_rate",
                rate * 100.0,
                "%",
                f"(stop + length) / all finished requests on {target.name}, "
                f"weighted by request rate over {len(ratios)} polls",
            )
        )
    return out


def evidence_fill(
    *, target: Target, start: datetime, end: datetime, user: Any | None = None
) -> list[Measured]:
    """Write the window's measurements into the target's decision record; return them."""
    from planner.decisions.services import record_evidence_measurement

    if target.decision_id is None:
        return []
    measured = measure_window(target, start, end)
    with transaction.atomic():
        for item in measured:
            record_evidence_measurement(
                decision=target.decision,
                item_kind=item.kind,
                value=item.value,
                unit=item.unit,
                window_start=start,
                window_end=end,
                note=item.note,
                user=user,
            )
    return measured
