"""Window reads: rollups before the cursor for series whose raw samples are gone, raw after."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from monitoring.models import Sample
from monitoring.stores.embedded.retention import rolled_up_to, rollup_run
from monitoring.stores.embedded.window import window_series
from tests.monitoring.factories import write_series

pytestmark = pytest.mark.django_db

START = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


def test_each_key_reads_rollups_only_where_its_raw_samples_are_gone(make_target):
    target = make_target()
    for key in ("pruned", "kept"):
        write_series(target, key, start=START, step_s=15, count=40)  # 12:00 .. 12:09:45
    rollup_run(now=START + timedelta(minutes=7))
    cursor = rolled_up_to()
    assert cursor == START + timedelta(minutes=5)
    Sample.objects.filter(series="pruned", ts__lt=cursor).delete()  # as retention would

    series = window_series(target, ["pruned", "kept", "absent"], START, START + timedelta(hours=1))

    minutes = [START + timedelta(minutes=m) for m in range(5)]
    after = [START + timedelta(seconds=15 * i) for i in range(20, 40)]
    # One point per rolled-up minute (the mean of its four polls), then every raw poll.
    assert series["pruned"] == [
        *((m, 4 * i + 1.5) for i, m in enumerate(minutes)),
        *((t, float(20 + i)) for i, t in enumerate(after)),
    ]
    assert sorted(series["kept"]) == [
        (START + timedelta(seconds=15 * i), float(i)) for i in range(40)
    ]
    assert series["absent"] == []


def test_non_finite_values_and_labelled_series_are_left_out(make_target):
    target = make_target()
    write_series(
        target, "x", start=START, step_s=15, count=3, value=lambda i: [1.0, math.inf, 3.0][i]
    )
    write_series(target, "x", start=START, step_s=15, count=3, labels='{gpu="0"}')

    series = window_series(target, ["x"], START, START + timedelta(minutes=1))

    assert sorted(v for _, v in series["x"]) == [1.0, 3.0]


def test_a_window_of_many_keys_is_read_in_one_query_of_samples(
    make_target, django_assert_num_queries
):
    target = make_target()
    keys = [f"k{i}" for i in range(6)]
    for key in keys:
        write_series(target, key, start=START, step_s=15, count=4)

    with django_assert_num_queries(2):  # the rollup cursor, then every key's samples
        series = window_series(target, keys, START, START + timedelta(minutes=1))

    assert {key: len(points) for key, points in series.items()} == dict.fromkeys(keys, 4)
