"""Raw samples in hourly PostgreSQL partitions (migration 0016): writes, maintenance, retention.

PostgreSQL only (`integration`: under scripts/test-env a skip here is a failure); SQLite keeps
the plain table, whose retention tests are in test_rollups.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from monitoring import partitioning
from monitoring.models import RollupCursor, Sample
from monitoring.stores.embedded.retention import (
    create_partitions,
    partitions_run,
    retention_run,
    sample_partitions,
    samples_partitioned,
)
from tests.monitoring.factories import write_series

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.integration,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL"),
]

# Days before the test run: no partition exists for these hours until a test makes one.
START = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {table}")
        return cursor.fetchone()[0]


def _name(hour: datetime) -> str:
    return partitioning.partition_at(hour).name


def test_the_sample_table_is_partitioned_by_the_hour_with_a_default():
    assert samples_partitioned()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.partstrat, a.attname FROM pg_partitioned_table p"
            " JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]"
            " WHERE p.partrelid = 'monitoring_sample'::regclass"
        )
        assert cursor.fetchone() == ("r", "ts")
        cursor.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'monitoring_sample'::regclass AND contype IN ('p', 'u')"
            " ORDER BY contype"
        )
        keys = [row[0] for row in cursor.fetchall()]
    assert keys == ["PRIMARY KEY (id, ts)", "UNIQUE (target_id, series, ts, labels)"]
    # The migration made the hours around now, ahead of the writes.
    now = datetime.now(UTC)
    assert {partitioning.DEFAULT_PARTITION, _name(now), _name(now + timedelta(hours=1))} <= (
        sample_partitions()
    )


def test_the_targets_own_index_is_gone_the_key_and_ts_remain():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'monitoring_sample' ORDER BY 1"
        )
        names = [row[0] for row in cursor.fetchall()]
    assert names == ["monitoring_sample_key", "monitoring_sample_pkey", "monitoring_sample_ts"]


def test_a_write_to_an_hour_without_partition_lands_in_the_default_one(make_target):
    target = make_target()
    write_series(target, "x", start=START, step_s=60, count=5)

    assert _count(partitioning.DEFAULT_PARTITION) == 5
    assert Sample.objects.filter(target=target).count() == 5
    # A redelivered poll still writes nothing twice (the key holds the partition column).
    again = [Sample(target=target, series="x", ts=START, value=9.0)]
    Sample.objects.bulk_create(again, ignore_conflicts=True)
    assert Sample.objects.filter(target=target).count() == 5


def test_maintenance_creates_the_coming_hours_and_moves_what_default_held(make_target):
    target = make_target()
    write_series(target, "x", start=START + timedelta(minutes=30), step_s=60, count=60)

    created = create_partitions(START, START + timedelta(hours=2))

    assert created == [_name(START), _name(START + timedelta(hours=1))]
    assert _count(partitioning.DEFAULT_PARTITION) == 0
    assert _count(_name(START)) == 30
    assert _count(_name(START + timedelta(hours=1))) == 30
    assert Sample.objects.count() == 60
    assert create_partitions(START, START + timedelta(hours=2)) == []  # idempotent

    later = START + timedelta(days=1, minutes=10)
    made = partitions_run(now=later)
    assert made[0] == _name(later)
    assert len(made) == 7  # this hour and 6 ahead (the default setting)


def test_retention_drops_expired_hours_and_deletes_expired_default_rows(make_target, settings):
    settings.MONITORING_RAW_RETENTION_H = 48
    target = make_target()
    create_partitions(START, START + timedelta(hours=3))
    write_series(target, "x", start=START, step_s=600, count=18)  # 3 h, 6 rows an hour
    write_series(target, "old", start=START - timedelta(hours=1), step_s=600, count=6)  # default
    RollupCursor.objects.create(name="samples", rolled_up_to=START + timedelta(hours=3))

    # Cutoff 13:30: the 12:00 hour is expired whole; 13:00-13:30 waits for its hour to expire.
    result = retention_run(now=START + timedelta(hours=49, minutes=30))

    assert result.partitions_dropped == 1
    assert result.samples_deleted == 6  # the default partition's rows, older than the cutoff
    assert result.done
    assert _name(START) not in sample_partitions()
    kept = sorted(Sample.objects.values_list("ts", flat=True))
    assert kept[0] == START + timedelta(hours=1)
    assert len(kept) == 12


def test_retention_keeps_partitions_that_are_not_rolled_up_yet(make_target):
    target = make_target()
    create_partitions(START, START + timedelta(hours=2))
    write_series(target, "x", start=START, step_s=600, count=12)
    RollupCursor.objects.create(name="samples", rolled_up_to=START + timedelta(minutes=30))

    result = retention_run(now=START + timedelta(hours=60))

    assert result.partitions_dropped == 0
    assert Sample.objects.count() == 12


@pytest.mark.django_db(transaction=True)
def test_a_partition_a_reader_holds_is_dropped_at_a_later_run_not_waited_for():
    import psycopg

    from monitoring.stores.embedded.retention import drop_partitions

    create_partitions(START, START + timedelta(hours=1))
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params) as reader:  # a long dashboard read of that hour
        reader.execute(f"SELECT * FROM {_name(START)} LIMIT 1")
        assert drop_partitions(START + timedelta(hours=1)) == []
    assert drop_partitions(START + timedelta(hours=1)) == [_name(START)]


def _attach_legacy(cut_off: datetime) -> str:
    """A legacy partition as an upgrade leaves it: a plain table of every row before `cut_off`."""
    legacy = partitioning.legacy_partition(cut_off)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {legacy.name} (LIKE monitoring_sample INCLUDING DEFAULTS)")
        cursor.execute(
            f"ALTER TABLE monitoring_sample ATTACH PARTITION {legacy.name}"
            " FOR VALUES FROM (MINVALUE) TO (%s)",
            [cut_off],
        )
    return legacy.name


def test_retention_deletes_a_legacy_partitions_expired_rows_in_batches_then_drops_it(
    make_target, settings
):
    settings.MONITORING_RAW_RETENTION_H = 48
    settings.MONITORING_RETENTION_BATCH_ROWS = 4
    settings.MONITORING_RETENTION_MAX_BATCHES = 2
    target = make_target()
    legacy = _attach_legacy(START)
    # Maintenance makes no hour the legacy partition covers, only those from its cut-off.
    assert create_partitions(START - timedelta(hours=2), START + timedelta(hours=1)) == [
        _name(START)
    ]
    write_series(target, "x", start=START - timedelta(hours=2), step_s=600, count=18)
    assert _count(legacy) == 12
    RollupCursor.objects.create(name="samples", rolled_up_to=START + timedelta(hours=3))
    now = START + timedelta(hours=47)  # cutoff 11:00: the first 6 legacy rows (10:00-11:00)

    first = retention_run(now=now)  # a batch finds the default partition empty, one takes 4
    second = retention_run(now=now)

    assert (first.samples_deleted, first.done, first.partitions_dropped) == (4, False, 0)
    assert (second.samples_deleted, second.done) == (2, True)
    assert _count(legacy) == 6
    last = retention_run(now=START + timedelta(hours=48))
    assert last.partitions_dropped == 1
    assert legacy not in sample_partitions()
    assert Sample.objects.count() == 6  # the hour after the cut-off, in its own partition
    assert _count(_name(START)) == 6
