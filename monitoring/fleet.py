"""Fleet sums: every target's unlabelled latest values added up once per scheduler tick.

The overview's charts show sums over the whole fleet. Summing every target's raw samples at each
request cost seconds on a fleet of 200 (it read 240 polls x 200 targets per key); instead the
scheduler adds up the targets' `latest` values (one query of 200 small rows) at each tick and
stores one row, and the rollup job averages a minute of ticks into one row. A chart then reads
one row per point, whatever the fleet's size.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Avg, FloatField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from monitoring import stores
from monitoring.models import FleetSum, PollStatus, Target
from monitoring.series import remote_write as rw

TICK_STEP_S = rw.FLEET_TICK_S  # the scheduler's tick, which the fleet series is written at
# Ticks run late on a busy worker: the charts break their line only after 2.5 times this.
TICK_LATE_S = 15
MINUTE_STEP_S = 60
# A target counts while its last success is this recent (in poll intervals), as "up" on the
# overview: a target that missed one poll still adds its last values, one that is down does not.
FRESH_INTERVALS = 3


def fleet_values(*, now: datetime) -> dict[str, float]:
    """Return the sum of each unlabelled latest value over the enabled targets that are up."""
    # Polled targets only: a read-only target's poll keeps latest values too, but its store
    # sums its series itself (monitoring.stores.routing), and would count it twice.
    rows = Target.objects.filter(enabled=True, last_status=PollStatus.OK, selector="").values_list(
        "latest", "last_success_at", "poll_interval_s"
    )
    sums: dict[str, float] = defaultdict(float)
    for latest, last_success_at, interval_s in rows:
        if last_success_at is None or now - last_success_at > timedelta(
            seconds=FRESH_INTERVALS * interval_s
        ):
            continue
        for key, value in (latest or {}).items():
            if "{" not in key and isinstance(value, int | float) and math.isfinite(value):
                sums[key] += value
    return {key: round(value, 6) for key, value in sums.items()}


def covers_polled_fleet(target_ids: Iterable[int]) -> bool:
    """Whether the ids hold every polled target: the fleet's stored sums are exactly theirs."""
    polled = Target.objects.filter(selector="").values_list("pk", flat=True)
    return set(target_ids) >= set(polled)


def fleet_tick_record(*, now: datetime) -> dict[str, float] | None:
    """Store the fleet's sums at `now` in the series store (the embedded store: one row per
    tick; a Prometheus-compatible server: one series per key); return them, None if no target
    is up."""
    values = fleet_values(now=now)
    if not values:
        return None
    stores.current().write_fleet_sums(now.replace(microsecond=0), values)
    return values


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
