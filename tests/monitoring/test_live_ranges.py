"""A live window of the embedded store is read once per poll of its targets, not per refresh."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from monitoring import stores
from monitoring.models import Target
from monitoring.series import SeriesMatch
from monitoring.stores.embedded import EmbeddedStore
from monitoring.stores.live_ranges import MAX_KEEP_S, keep_s, live_key
from tests.monitoring.factories import mark_up, write_series

pytestmark = pytest.mark.django_db

RUNNING = [SeriesMatch("vllm.requests_running")]


def _series_reads(read) -> tuple[object, int]:
    with CaptureQueriesContext(connection) as queries:
        result = read()
    touched = [q for q in queries.captured_queries if "monitoring_sample" in q["sql"]]
    return result, len(touched)


def _polled(make_target, polls: int, *, interval_s: int = 15) -> tuple[Target, object]:
    target = make_target(poll_interval_s=interval_s)
    first = timezone.now() - timedelta(seconds=interval_s * polls)
    write_series(target, "vllm.requests_running", start=first, step_s=interval_s, count=polls)
    last = first + timedelta(seconds=interval_s * (polls - 1))
    mark_up(target, last, {"vllm.requests_running": polls - 1})
    target.refresh_from_db()
    return target, last


def _last_hour(target: Target):
    end = timezone.now()
    return EmbeddedStore().range(
        [stores.ref(target)], RUNNING, end - timedelta(minutes=10), end, 1000
    )


def _values(result) -> list[float]:
    (series,) = result.series
    return [v for v in series.values if v is not None]


def test_the_same_live_window_between_two_polls_reads_the_samples_once(make_target):
    target, _ = _polled(make_target, 8)

    first, reads = _series_reads(lambda: _last_hour(target))
    again, reads_again = _series_reads(lambda: _last_hour(target))

    assert reads == 1
    assert reads_again == 0
    assert again == first
    assert _values(first) == [float(i) for i in range(8)]


def test_a_new_poll_is_in_the_next_read(make_target):
    target, last = _polled(make_target, 8)
    _last_hour(target)

    polled_at = last + timedelta(seconds=15)
    write_series(
        target, "vllm.requests_running", start=polled_at, step_s=15, count=1, value=lambda i: 42.0
    )
    mark_up(target, polled_at, {"vllm.requests_running": 42})
    target.refresh_from_db()

    result, reads = _series_reads(lambda: _last_hour(target))
    assert reads == 1
    assert _values(result)[-1] == 42


def test_a_window_that_ends_before_the_newest_poll_is_read_every_time(make_target):
    target, last = _polled(make_target, 8)
    end = last - timedelta(seconds=30)
    ref = stores.ref(target)

    def read():
        return EmbeddedStore().range([ref], RUNNING, end - timedelta(minutes=10), end, 1000)

    assert live_key([ref], RUNNING, end - timedelta(minutes=10), end, 1000) is None
    assert _series_reads(read)[1] == 1
    assert _series_reads(read)[1] == 1


def test_targets_never_polled_or_read_only_are_not_kept(make_target, read_only_allowed):
    never = stores.ref(make_target())
    watched = stores.ref(make_target(base_url="", selector='{job="vllm",instance="a:8000"}'))
    end = timezone.now()
    for ref in (never, watched):
        assert live_key([ref], RUNNING, end - timedelta(hours=1), end, 1000) is None


def test_the_key_tells_apart_what_changes_the_answer(make_target):
    target, last = _polled(make_target, 4)
    ref = stores.ref(target)
    end = timezone.now()
    hour = end - timedelta(hours=1)
    key = live_key([ref], RUNNING, hour, end, 1000)

    assert key == live_key(
        [ref], RUNNING, hour + timedelta(seconds=4), end + timedelta(seconds=4), 1000
    )
    assert key != live_key([ref], [SeriesMatch("vllm.requests_waiting")], hour, end, 1000)
    assert key != live_key([ref], [SeriesMatch("vllm.requests_running", "")], hour, end, 1000)
    assert key != live_key([ref], RUNNING, end - timedelta(hours=6), end, 1000)
    assert key != live_key([ref], RUNNING, hour, end, 500)
    target.last_poll_at = last + timedelta(seconds=15)
    polled_again = stores.ref(target)
    assert key != live_key([polled_again], RUNNING, hour, end, 1000)


def test_an_answer_stands_at_most_one_poll_interval(make_target):
    fast, _ = _polled(make_target, 2, interval_s=5)
    slow, _ = _polled(make_target, 2, interval_s=3600)

    assert keep_s([stores.ref(fast)]) == 5
    assert keep_s([stores.ref(slow)]) == MAX_KEEP_S
    assert keep_s([stores.ref(fast), stores.ref(slow)]) == 5
