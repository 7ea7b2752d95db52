"""Values of a target's series over a time window: rollups before the cursor, raw samples after.

Evidence fill, plan vs reality and calibration all read windows through this.
"""

from __future__ import annotations

import math
import statistics
from datetime import datetime
from typing import Any

from monitoring.models import Rollup, Sample, Target
from monitoring.retention import rolled_up_to


def window_values(
    target: Target, key: str, start: datetime, end: datetime
) -> list[tuple[Any, float]]:
    """Return (time, value) of an unlabelled series in the window, finite values only."""
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


def p95(values: list[float]) -> float:
    """Return the nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def window_mean(target: Target, key: str, start: datetime, end: datetime) -> float | None:
    values = [v for _, v in window_values(target, key, start, end)]
    return statistics.fmean(values) if values else None


def window_p95(target: Target, key: str, start: datetime, end: datetime) -> float | None:
    """Return the 95th percentile of the per-poll values of `key` (e.g. per-poll p95s)."""
    values = [v for _, v in window_values(target, key, start, end)]
    return p95(values) if values else None
