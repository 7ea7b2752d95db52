"""The fleet sums in the embedded store: a minute's ticks averaged into one row, and the rows of
a range averaged per time bucket by the database (monitoring.fleet adds up the fleet's values)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Avg, FloatField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from monitoring.fleet import MINUTE_STEP_S, TICK_STEP_S
from monitoring.models import FleetSum


def fleet_minute_rollup(minute: datetime) -> None:
    """Average the ticks of the minute starting at `minute` into one row (idempotent)."""
    ticks = FleetSum.objects.filter(
        step_s=TICK_STEP_S, ts__gte=minute, ts__lt=minute + timedelta(minutes=1)
    ).values_list("values", flat=True)
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for values in ticks:
        for key, value in values.items():
            totals[key] += value
            counts[key] += 1
    if not totals:
        return
    averages = {key: round(total / counts[key], 6) for key, total in totals.items()}
    FleetSum.objects.update_or_create(
        step_s=MINUTE_STEP_S, ts=minute, defaults={"values": averages}
    )


def fleet_buckets(
    keys: Sequence[str], *, step_s: int, bucket: Any, **when: datetime
) -> dict[str, dict[int, float]]:
    """Return {key: {bucket: average}} of the rows of one step whose `ts` matches `when`
    (lookups such as ts__gte=...).

    The averaging is the database's (one row per bucket comes back): the JSON of each row is
    never loaded into Python.
    """
    averages = {
        f"k{i}": Avg(Cast(KT(f"values__{key}"), FloatField())) for i, key in enumerate(keys)
    }
    rows = (
        FleetSum.objects.filter(step_s=step_s, **when)
        .annotate(bucket=bucket)
        .values("bucket")
        .annotate(**averages)
        .order_by("bucket")
    )
    out: dict[str, dict[int, float]] = {key: {} for key in keys}
    for row in rows:
        for i, key in enumerate(keys):
            value = row[f"k{i}"]
            if value is not None:
                out[key][row["bucket"]] = value
    return out
