"""Which hourly sample partitions to create and drop (pure; every database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from monitoring import partitioning

HOUR = datetime(2026, 12, 1, 23, 0, tzinfo=UTC)


def test_a_partition_is_named_by_its_utc_hour_and_spans_one_hour():
    local = datetime(2026, 12, 2, 7, 25, tzinfo=timezone(timedelta(hours=8)))
    partition = partitioning.partition_at(local)
    assert partition.name == "monitoring_sample_p2026120123"
    assert (partition.start, partition.end) == (HOUR, HOUR + timedelta(hours=1))
    assert partitioning.parse(partition.name) == partition
    assert partitioning.parse(partitioning.DEFAULT_PARTITION) is None
    assert partitioning.parse("monitoring_sample_p20261201") is None


def test_to_create_lists_the_missing_hours_only():
    existing = {"monitoring_sample_p2026120200", partitioning.DEFAULT_PARTITION}
    made = partitioning.to_create(existing, HOUR + timedelta(minutes=40), HOUR + timedelta(hours=2))
    assert [p.name for p in made] == ["monitoring_sample_p2026120123"]
    end = HOUR + timedelta(hours=2, minutes=1)
    assert [p.name for p in partitioning.to_create(existing, HOUR, end)][-1] == (
        "monitoring_sample_p2026120201"
    )


def test_to_drop_lists_the_hours_whose_every_row_is_older_oldest_first():
    names = {partitioning.partition_at(HOUR + timedelta(hours=h)).name for h in (2, 0, 1)}
    names.add(partitioning.DEFAULT_PARTITION)
    dropped = partitioning.to_drop(names, HOUR + timedelta(hours=1, minutes=59))
    assert [p.name for p in dropped] == ["monitoring_sample_p2026120123"]
    assert partitioning.to_drop(names, HOUR + timedelta(minutes=59)) == []


def test_the_legacy_partition_of_an_upgrade_is_parsed_by_its_cut_off_and_has_no_lower_bound():
    legacy = partitioning.legacy_partition(HOUR + timedelta(minutes=20))
    assert legacy.name == "monitoring_sample_legacy_before2026120123"
    assert (legacy.start, legacy.end, legacy.legacy) == (None, HOUR, True)
    assert partitioning.parse(legacy.name) == legacy
    assert not partitioning.partition_at(HOUR).legacy


def test_no_hour_is_made_below_a_legacy_partitions_cut_off():
    existing = {partitioning.legacy_partition(HOUR).name, partitioning.DEFAULT_PARTITION}
    made = partitioning.to_create(existing, HOUR - timedelta(hours=3), HOUR + timedelta(hours=2))
    assert [p.start for p in made] == [HOUR, HOUR + timedelta(hours=1)]
    assert partitioning.to_create(existing, HOUR - timedelta(hours=3), HOUR) == []


def test_the_legacy_partition_is_dropped_once_its_cut_off_is_past_and_deleted_by_rows_until():
    legacy = partitioning.legacy_partition(HOUR).name
    hourly = partitioning.partition_at(HOUR).name
    existing = {legacy, hourly, partitioning.DEFAULT_PARTITION}
    assert partitioning.to_drop(existing, HOUR - timedelta(minutes=1)) == []
    dropped = partitioning.to_drop(existing, HOUR + timedelta(hours=1))
    assert [p.name for p in dropped] == [legacy, hourly]
    assert partitioning.deleted_by_rows(existing) == [partitioning.DEFAULT_PARTITION, legacy]
    assert partitioning.deleted_by_rows({hourly}) == []
