"""One-minute rollups of raw samples and retention, both in bounded batches."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from monitoring import partitioning
from monitoring.fleet import MINUTE_STEP_S, TICK_STEP_S
from monitoring.models import FleetSum, Rollup, RollupCursor, Sample
from monitoring.stores.embedded.fleet_sums import fleet_minute_rollup

logger = logging.getLogger(__name__)

CURSOR = "samples"
# How long dropping an expired sample partition may wait for the table's readers and writers.
DROP_LOCK_TIMEOUT_MS = 2000
# Samples are stored up to a poll's time limit after their timestamp: leave them that long.
ROLLUP_GRACE = timedelta(minutes=2)
MINUTE = timedelta(minutes=1)


def floor_minute(when: datetime) -> datetime:
    return when.replace(second=0, microsecond=0)


def rolled_up_to() -> datetime | None:
    """Return the time before which every raw sample has been rolled up."""
    return RollupCursor.objects.filter(name=CURSOR).values_list("rolled_up_to", flat=True).first()


def _rollup_minute(start: datetime) -> int:
    """Roll up the minute starting at `start` in one statement; return the raw rows it read.

    The database aggregates (one row per series comes back into nothing: INSERT ... SELECT);
    the last value of each series is found through the sample key's index. Rolling a minute up
    again overwrites its rows. The same SQL runs on PostgreSQL and SQLite (3.24+ for upserts).
    """
    sample, rollup = Sample._meta.db_table, Rollup._meta.db_table
    sql = f"""
        INSERT INTO {rollup} (target_id, series, labels, minute, count, min, avg, max, last)
        SELECT s.target_id, s.series, s.labels, %s, COUNT(*), MIN(s.value), AVG(s.value),
               MAX(s.value),
               (SELECT x.value FROM {sample} x
                 WHERE x.target_id = s.target_id AND x.series = s.series
                   AND x.labels = s.labels AND x.ts >= %s AND x.ts < %s
                 ORDER BY x.ts DESC LIMIT 1)
        FROM {sample} s
        WHERE s.ts >= %s AND s.ts < %s
        GROUP BY s.target_id, s.series, s.labels
        ON CONFLICT (target_id, series, minute, labels) DO UPDATE SET
            count = excluded.count, min = excluded.min, avg = excluded.avg,
            max = excluded.max, last = excluded.last
    """
    bounds = [connection.ops.adapt_datetimefield_value(t) for t in (start, start + MINUTE)]
    with connection.cursor() as cursor:
        cursor.execute(sql, [bounds[0], *bounds, *bounds])
        cursor.execute(
            f"SELECT COALESCE(SUM(count), 0) FROM {rollup} WHERE minute = %s", [bounds[0]]
        )
        return int(cursor.fetchone()[0])


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
        with transaction.atomic():
            count = _rollup_minute(start)
            fleet_minute_rollup(start)
            start += MINUTE
            RollupCursor.objects.filter(pk=cursor.pk).update(rolled_up_to=start)
        minutes += 1
        rows += count
    return minutes


@dataclass(frozen=True, slots=True)
class RetentionResult:
    # Rows deleted in batches (SQLite; PostgreSQL's default partition and an upgrade's legacy one).
    samples_deleted: int
    rollups_deleted: int
    done: bool  # False when the batch bound stopped it: the next run continues
    partitions_dropped: int = 0  # PostgreSQL: whole hours of raw samples dropped


def samples_partitioned(conn=connection) -> bool:
    """Whether the raw sample table is a partitioned one (PostgreSQL after migration 0016)."""
    if conn.vendor != "postgresql":
        return False
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [partitioning.TABLE]
        )
        row = cursor.fetchone()
    return row is not None and row[0] == "p"


def sample_partitions(conn=connection) -> set[str]:
    """The names of the sample table's partitions, the default one included."""
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = to_regclass(%s)",
            [partitioning.TABLE],
        )
        return {name for (name,) in cursor.fetchall()}


def create_partitions(start: datetime, end: datetime, conn=connection) -> list[str]:
    """Create the hourly sample partitions missing to cover [start, end); return their names.

    Rows the default partition already holds for an hour move into its new partition (in the
    same transaction), so that attaching it never fails and nothing is lost. The new table is
    attached rather than created as a partition: that locks the parent table only against
    schema changes, never against the pollers' writes.
    """
    table, default = partitioning.TABLE, partitioning.DEFAULT_PARTITION
    created = []
    for partition in partitioning.to_create(sample_partitions(conn), start, end):
        bounds = [conn.ops.adapt_datetimefield_value(t) for t in (partition.start, partition.end)]
        name = conn.ops.quote_name(partition.name)
        with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
            cursor.execute(f"CREATE TABLE {name} (LIKE {table} INCLUDING DEFAULTS)")
            # No poll may add a row for that hour to the default partition between the move
            # and the attach (the attach would fail); their writes wait a moment instead.
            cursor.execute(f"LOCK TABLE {default} IN SHARE ROW EXCLUSIVE MODE")
            cursor.execute(
                f"WITH moved AS (DELETE FROM {default} WHERE ts >= %s AND ts < %s RETURNING *)"
                f" INSERT INTO {name} SELECT * FROM moved",
                bounds,
            )
            cursor.execute(
                f"ALTER TABLE {table} ATTACH PARTITION {name} FOR VALUES FROM (%s) TO (%s)",
                bounds,
            )
        created.append(partition.name)
    return created


def drop_partitions(before: datetime, conn=connection) -> list[str]:
    """Drop the hourly sample partitions whose rows are all older than `before`."""
    dropped = []
    for partition in partitioning.to_drop(sample_partitions(conn), before):
        try:
            with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
                # Within a transaction that wrote samples, their deferred foreign-key checks
                # must run first (PostgreSQL refuses to drop a table with pending trigger events).
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                # A drop locks the whole sample table: behind a long dashboard read every poll
                # would queue behind it. Give up after a moment; the next run drops it.
                cursor.execute(f"SET LOCAL lock_timeout = '{DROP_LOCK_TIMEOUT_MS}ms'")
                cursor.execute(f"DROP TABLE IF EXISTS {conn.ops.quote_name(partition.name)}")
        except OperationalError:
            logger.info("sample partition %s busy: dropped at the next run", partition.name)
            continue
        dropped.append(partition.name)
    return dropped


def partitions_run(*, now: datetime | None = None) -> list[str]:
    """Create the sample partitions of the current hour and MONITORING_SAMPLE_PARTITIONS_AHEAD_H
    hours ahead (no-op unless the table is partitioned); return the names created."""
    if not samples_partitioned():
        return []
    now = now or timezone.now()
    ahead = timedelta(hours=max(settings.MONITORING_SAMPLE_PARTITIONS_AHEAD_H, 0))
    return create_partitions(partitioning.floor_hour(now), now + ahead)


def _delete_partition_batches(
    names: list[str], before: datetime, batch: int, budget: int
) -> tuple[int, bool]:
    """Delete rows older than `before` from the partitions named (the default and legacy ones),
    one after the other, in at most `budget` batches in all; return (rows deleted, done)."""
    bound = connection.ops.adapt_datetimefield_value(before)
    pending = [connection.ops.quote_name(name) for name in names]
    deleted = 0
    for _ in range(budget):
        if not pending:
            break
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {pending[0]} WHERE ctid IN"
                f" (SELECT ctid FROM {pending[0]} WHERE ts < %s LIMIT %s)",
                [bound, batch],
            )
            count = cursor.rowcount
        deleted += count
        if count < batch:
            pending.pop(0)
    return deleted, not pending


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
    rollups, in batches of MONITORING_RETENTION_BATCH_ROWS rows.

    On PostgreSQL (partitioned samples) raw samples go by the hour: every partition whose rows
    are all expired is dropped, so an expired row stays until its hour has expired too (up to
    an hour past the retention); only the expired rows of the default partition, and of the
    legacy partition an upgraded database has until its cut-off expires too (it is dropped
    then), are deleted in batches."""
    now = now or timezone.now()
    batch = settings.MONITORING_RETENTION_BATCH_ROWS
    budget = settings.MONITORING_RETENTION_MAX_BATCHES
    raw_cutoff = now - timedelta(hours=settings.MONITORING_RAW_RETENTION_H)
    cursor = rolled_up_to()
    dropped = 0
    if cursor is None:  # nothing rolled up yet (rollup_run creates the cursor first)
        samples, samples_done = 0, True
    elif samples_partitioned():
        dropped = len(drop_partitions(min(raw_cutoff, cursor)))
        samples, samples_done = _delete_partition_batches(
            partitioning.deleted_by_rows(sample_partitions()),
            min(raw_cutoff, cursor),
            batch,
            budget,
        )
    else:
        samples, samples_done = _delete_batches(
            Sample.objects.filter(ts__lt=min(raw_cutoff, cursor)), batch, budget
        )
    rollup_cutoff = now - timedelta(days=settings.MONITORING_ROLLUP_RETENTION_D)
    rollups, rollups_done = _delete_batches(
        Rollup.objects.filter(minute__lt=rollup_cutoff), batch, budget
    )
    # Fleet sums follow the same periods: ticks like raw samples, minutes like rollups.
    old_fleet = Q(step_s=MINUTE_STEP_S, ts__lt=rollup_cutoff)
    if cursor is not None:
        old_fleet |= Q(step_s=TICK_STEP_S, ts__lt=min(raw_cutoff, cursor))
    _, fleet_done = _delete_batches(FleetSum.objects.filter(old_fleet), batch, budget)
    done = samples_done and rollups_done and fleet_done
    return RetentionResult(samples, rollups, done, partitions_dropped=dropped)
