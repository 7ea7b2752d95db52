"""One-minute rollups of raw samples and retention, both in bounded batches."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from monitoring.models import Rollup, RollupCursor, Sample

CURSOR = "samples"
# Samples are stored up to a poll's time limit after their timestamp: leave them that long.
ROLLUP_GRACE = timedelta(minutes=2)
MINUTE = timedelta(minutes=1)


def floor_minute(when: datetime) -> datetime:
    return when.replace(second=0, microsecond=0)


def rolled_up_to() -> datetime | None:
    """Return the time before which every raw sample has been rolled up."""
    return RollupCursor.objects.filter(name=CURSOR).values_list("rolled_up_to", flat=True).first()


def _aggregate_minute(start: datetime) -> tuple[list[Rollup], int]:
    acc: dict[tuple[int, str, str], list[float]] = {}
    rows = 0
    qs = (
        Sample.objects.filter(ts__gte=start, ts__lt=start + MINUTE)
        .order_by("ts")
        .values_list("target_id", "series", "labels", "value")
    )
    for target_id, series, labels, value in qs.iterator(chunk_size=5000):
        rows += 1
        key = (target_id, series, labels)
        entry = acc.get(key)
        if entry is None:
            acc[key] = [1, value, value, value, value]  # count, min, sum, max, last
        else:
            entry[0] += 1
            entry[1] = min(entry[1], value)
            entry[2] += value
            entry[3] = max(entry[3], value)
            entry[4] = value
    rollups = [
        Rollup(
            target_id=target_id,
            series=series,
            labels=labels,
            minute=start,
            count=int(count),
            min=low,
            avg=total / count,
            max=high,
            last=last,
        )
        for (target_id, series, labels), (count, low, total, high, last) in acc.items()
    ]
    return rollups, rows


def rollup_run(*, now: datetime | None = None) -> int:
    """Roll up complete minutes after the cursor, within the per-run minute and row bounds.

    Return the number of minutes rolled up. Idempotent: rolling a minute up again overwrites it.
    """
    now = now or timezone.now()
    end_limit = floor_minute(now - ROLLUP_GRACE)
    cursor = RollupCursor.objects.filter(name=CURSOR).first()
    if cursor is None:
        first = Sample.objects.order_by("ts").values_list("ts", flat=True).first()
        if first is None:
            return 0
        cursor = RollupCursor.objects.create(name=CURSOR, rolled_up_to=floor_minute(first))
    start = cursor.rolled_up_to
    oldest_raw = now - timedelta(hours=settings.MONITORING_RAW_RETENTION_H)
    if start < floor_minute(oldest_raw):
        start = floor_minute(oldest_raw)  # raw older than retention is gone (or going)
    max_minutes = settings.MONITORING_ROLLUP_MAX_MINUTES_PER_RUN
    max_rows = settings.MONITORING_ROLLUP_MAX_ROWS_PER_RUN
    minutes = 0
    rows = 0
    while start < end_limit and minutes < max_minutes and rows < max_rows:
        rollups, count = _aggregate_minute(start)
        with transaction.atomic():
            if rollups:
                Rollup.objects.bulk_create(
                    rollups,
                    update_conflicts=True,
                    unique_fields=["target", "series", "minute", "labels"],
                    update_fields=["count", "min", "avg", "max", "last"],
                    batch_size=1000,
                )
            start += MINUTE
            RollupCursor.objects.filter(pk=cursor.pk).update(rolled_up_to=start)
        minutes += 1
        rows += count
    return minutes


@dataclass(frozen=True, slots=True)
class RetentionResult:
    samples_deleted: int
    rollups_deleted: int
    done: bool  # False when the batch bound stopped it: the next run continues


def _delete_batches(qs, batch: int, budget: int) -> tuple[int, bool]:
    deleted = 0
    for _ in range(budget):
        ids = list(qs.order_by().values_list("pk", flat=True)[:batch])
        if not ids:
            return deleted, True
        deleted += qs.model.objects.filter(pk__in=ids).delete()[0]
        if len(ids) < batch:
            return deleted, True
    return deleted, False


def retention_run(*, now: datetime | None = None) -> RetentionResult:
    """Delete raw samples past their retention (never before they are rolled up) and old
    rollups, in batches of MONITORING_RETENTION_BATCH_ROWS rows."""
    now = now or timezone.now()
    batch = settings.MONITORING_RETENTION_BATCH_ROWS
    budget = settings.MONITORING_RETENTION_MAX_BATCHES
    raw_cutoff = now - timedelta(hours=settings.MONITORING_RAW_RETENTION_H)
    cursor = rolled_up_to()
    if cursor is None:  # nothing rolled up yet (rollup_run creates the cursor first)
        samples, samples_done = 0, True
    else:
        samples, samples_done = _delete_batches(
            Sample.objects.filter(ts__lt=min(raw_cutoff, cursor)), batch, budget
        )
    rollup_cutoff = now - timedelta(days=settings.MONITORING_ROLLUP_RETENTION_D)
    rollups, rollups_done = _delete_batches(
        Rollup.objects.filter(minute__lt=rollup_cutoff), batch, budget
    )
    return RetentionResult(samples, rollups, samples_done and rollups_done)
