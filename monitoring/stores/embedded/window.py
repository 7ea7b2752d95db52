"""Values of a target's series over a time window: rollups before the cursor, raw samples after.

Evidence fill, plan vs reality and calibration all read windows through this.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime

from django.db.models import Q

from monitoring.models import Rollup, Sample, Target
from monitoring.series import Points
from monitoring.stores.embedded.retention import rolled_up_to


def _rolled_up_keys(target: Target | int, keys: list[str], start: datetime) -> list[str]:
    """Return the keys whose raw samples no longer reach back to `start` (read from rollups)."""
    rolled = []
    for key in keys:
        oldest = (
            Sample.objects.filter(target=target, series=key, labels="")
            .order_by("ts")
            .values_list("ts", flat=True)
            .first()
        )
        if oldest is None or oldest > start:
            rolled.append(key)
    return rolled


def window_series(
    target: Target | int, keys: Iterable[str], start: datetime, end: datetime
) -> dict[str, Points]:
    """Return (time, value) of each unlabelled series of a target (or its id) in the window,
    finite values only.

    One query for the raw samples of every key (two more, plus one per key, when the window
    reaches back before the rollup cursor): a dashboard reads its keys together, not one by one.
    """
    wanted = list(dict.fromkeys(keys))
    out: dict[str, Points] = {key: [] for key in wanted}
    if not wanted:
        return out
    cursor = rolled_up_to()
    rolled: list[str] = []
    rolled_until = start
    if cursor is not None and cursor > start:
        rolled = _rolled_up_keys(target, wanted, start)
        rolled_until = min(cursor, end)
    if rolled:
        minutes = Rollup.objects.filter(
            target=target,
            series__in=rolled,
            labels="",
            minute__gte=start,
            minute__lt=rolled_until,
        ).values_list("series", "minute", "avg")
        for key, minute, avg in minutes:
            out[key].append((minute, avg))
    raw = [k for k in wanted if k not in rolled]
    since = Q(series__in=raw, ts__gte=start) | Q(series__in=rolled, ts__gte=rolled_until)
    samples = Sample.objects.filter(since, target=target, labels="", ts__lte=end).values_list(
        "series", "ts", "value"
    )
    for key, ts, value in samples:
        out[key].append((ts, value))
    return {key: [(t, v) for t, v in points if math.isfinite(v)] for key, points in out.items()}
