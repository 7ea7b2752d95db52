"""One-minute rollups and retention, in bounded batches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitoring.models import Rollup, RollupCursor, Sample
from monitoring.stores.embedded.retention import retention_run, rolled_up_to, rollup_run
from tests.monitoring.factories import write_series

pytestmark = pytest.mark.django_db

START = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def test_rollup_aggregates_each_minute_min_avg_max_last(make_target):
    target = make_target()
    write_series(target, "vllm.requests_running", start=START, step_s=15, count=8)

    minutes = rollup_run(now=START + timedelta(minutes=10))

    assert minutes == 8  # 12:00 .. 12:07 (the grace keeps the last two minutes open)
    first, second = Rollup.objects.order_by("minute")[:2]
    assert (first.count, first.min, first.avg, first.max, first.last) == (4, 0.0, 1.5, 3.0, 3.0)
    assert (second.min, second.max, second.last) == (4.0, 7.0, 7.0)


def test_rollup_is_idempotent_and_resumes_at_its_cursor(make_target):
    target = make_target()
    write_series(target, "x", start=START, step_s=30, count=20)
    rollup_run(now=START + timedelta(minutes=5))
    assert rolled_up_to() == START + timedelta(minutes=3)

    rollup_run(now=START + timedelta(minutes=5))
    rollup_run(now=START + timedelta(minutes=20))

    assert Rollup.objects.count() == 10
    assert rolled_up_to() == START + timedelta(minutes=18)


def test_rollup_runs_in_bounded_batches(make_target, settings):
    settings.MONITORING_ROLLUP_MAX_MINUTES_PER_RUN = 3
    target = make_target()
    write_series(target, "x", start=START, step_s=60, count=30)

    assert rollup_run(now=START + timedelta(hours=1)) == 3
    assert rollup_run(now=START + timedelta(hours=1)) == 3
    assert Rollup.objects.count() == 6


def test_retention_deletes_raw_after_48_hours_only_once_rolled_up(make_target):
    target = make_target()
    write_series(target, "x", start=START, step_s=60, count=10)
    now = START + timedelta(hours=49)

    kept = retention_run(now=now)  # nothing rolled up yet: raw stays
    assert kept.samples_deleted == 0

    RollupCursor.objects.create(name="samples", rolled_up_to=START + timedelta(minutes=5))
    result = retention_run(now=now)

    assert result.samples_deleted == 5
    assert Sample.objects.count() == 5


def test_retention_deletes_rollups_after_30_days_in_batches(make_target, settings):
    settings.MONITORING_RETENTION_BATCH_ROWS = 2
    settings.MONITORING_RETENTION_MAX_BATCHES = 2
    target = make_target()
    Rollup.objects.bulk_create(
        Rollup(
            target=target,
            series="x",
            minute=START + timedelta(minutes=i),
            count=1,
            min=0,
            avg=0,
            max=0,
            last=0,
        )
        for i in range(7)
    )
    now = START + timedelta(days=31)

    first = retention_run(now=now)
    second = retention_run(now=now)

    assert (first.rollups_deleted, first.done) == (4, False)
    assert (second.rollups_deleted, second.done) == (3, True)
    assert not Rollup.objects.exists()


def test_retention_periods_are_settings(make_target, settings):
    settings.MONITORING_RAW_RETENTION_H = 1
    target = make_target()
    write_series(target, "x", start=START, step_s=60, count=10)
    RollupCursor.objects.create(name="samples", rolled_up_to=START + timedelta(hours=2))

    result = retention_run(now=START + timedelta(hours=1, minutes=5))

    assert result.samples_deleted == 5
