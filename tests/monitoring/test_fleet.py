"""Fleet sums: the targets' latest values added up once per tick, averaged per minute."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from monitoring import stores, tasks
from monitoring.fleet import MINUTE_STEP_S, TICK_STEP_S, fleet_values
from monitoring.models import FleetSum, PollStatus, Target
from monitoring.series import remote_write as rw
from monitoring.stores.embedded.fleet_sums import fleet_minute_rollup
from monitoring.stores.embedded.queries import fleet_series
from monitoring.stores.embedded.retention import retention_run, rollup_run
from monitoring.tasks import fleet_tick_record
from tests.monitoring.factories import mark_up, write_series

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
RUNNING = "vllm.requests_running"


def test_the_tick_is_one_value_for_the_rows_the_fleet_series_and_the_scheduler():
    assert rw.FLEET.interval_s == TICK_STEP_S == tasks.SCHEDULER_INTERVAL_S


def test_the_remote_write_module_that_holds_it_imports_no_django():
    code = (
        "import sys, monitoring.series.remote_write as rw;"
        "print(rw.FLEET_TICK_S, sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split(maxsplit=1)
    assert out == [str(TICK_STEP_S), "[]\n"]


def test_only_targets_up_add_their_unlabelled_finite_values(make_target):
    up, stale, down, disabled = (make_target() for _ in range(4))
    mark_up(up, NOW, {RUNNING: 2.0, 'ray.gpus{state="used"}': 8.0})
    mark_up(stale, NOW - timedelta(minutes=5), {RUNNING: 100.0})  # 3 intervals of 15 s ago
    mark_up(down, NOW, {RUNNING: 100.0})
    Target.objects.filter(pk=down.pk).update(last_status=PollStatus.ERROR)
    mark_up(disabled, NOW, {RUNNING: 100.0})
    Target.objects.filter(pk=disabled.pk).update(enabled=False)
    make_target()  # never polled

    assert fleet_values(now=NOW) == {RUNNING: 2.0}


def test_a_read_only_target_is_left_to_its_store_not_counted_twice(make_target):
    polled, watched = make_target(), make_target()
    mark_up(polled, NOW, {RUNNING: 2.0})
    mark_up(watched, NOW, {RUNNING: 5.0})  # its read-only poll keeps latest values too
    Target.objects.filter(pk=watched.pk).update(selector='{job="vllm"}')

    assert fleet_values(now=NOW) == {RUNNING: 2.0}


def test_a_tick_is_stored_once_and_nothing_when_no_target_is_up(make_target):
    target = make_target()
    assert fleet_tick_record(now=NOW) is None

    mark_up(target, NOW, {RUNNING: 3.0})
    fleet_tick_record(now=NOW)
    fleet_tick_record(now=NOW)  # the same tick delivered twice

    assert list(FleetSum.objects.values_list("step_s", "values")) == [(TICK_STEP_S, {RUNNING: 3.0})]


def test_with_a_prometheus_store_a_tick_is_written_as_the_fleet_series(
    make_target, settings, monkeypatch
):
    from monitoring.series import remote_write as rw
    from monitoring.stores.prometheus import PrometheusStore

    settings.MONITORING_SERIES_STORE = stores.PROMETHEUS
    settings.MONITORING_PROMETHEUS_URL = "http://127.0.0.1:9"
    written = []
    monkeypatch.setattr(PrometheusStore, "write", lambda self, batch: written.append(batch))
    mark_up(make_target(), NOW, {RUNNING: 3.0})

    assert fleet_tick_record(now=NOW) == {RUNNING: 3.0}

    assert [(b.target, b.ts, [(x.key, x.value) for x in b.samples]) for b in written] == [
        (rw.FLEET, NOW, [(RUNNING, 3.0)])
    ]
    assert not FleetSum.objects.exists()


def test_a_minute_of_ticks_is_averaged_into_one_row_per_key(make_target):
    target = make_target()
    for i, value in enumerate((1.0, 2.0, 3.0, 6.0)):
        mark_up(target, NOW, {RUNNING: value, **({"x": 10.0} if i == 0 else {})})
        fleet_tick_record(now=NOW + timedelta(seconds=15 * i))

    fleet_minute_rollup(NOW)
    fleet_minute_rollup(NOW)  # idempotent

    minute = FleetSum.objects.get(step_s=MINUTE_STEP_S)
    assert (minute.ts, minute.values) == (NOW, {RUNNING: 3.0, "x": 10.0})


def test_long_ranges_read_minutes_then_the_ticks_after_the_rollup_cursor(make_target, settings):
    settings.MONITORING_ROLLUP_MAX_MINUTES_PER_RUN = 100
    target = make_target()
    write_series(target, RUNNING, start=NOW - timedelta(hours=1), step_s=60, count=60)
    for i in range(12 * 60):  # an hour of ticks: 1 for 50 minutes, then 5
        ts = NOW - timedelta(hours=1) + timedelta(seconds=5 * i)
        mark_up(target, ts, {RUNNING: 1.0 if i < 12 * 50 else 5.0})
        fleet_tick_record(now=ts)
    rollup_run(now=NOW - timedelta(minutes=8))  # minutes up to 10 min before NOW

    data = fleet_series(keys=[RUNNING], start=NOW - timedelta(hours=1), end=NOW)
    short = fleet_series(keys=[RUNNING], start=NOW - timedelta(minutes=15), end=NOW)

    assert data["source"] == "rollup"
    values = data["series"][0]["v"]
    assert len(values) == 50 + 12 * 10  # 50 minutes, then 10 minutes of ticks
    assert set(values[:50]) == {1.0}
    assert set(values[50:]) == {5.0}
    assert short["source"] == "raw"
    assert len(short["series"][0]["v"]) == 12 * 15


def test_retention_keeps_ticks_like_raw_samples_and_minutes_like_rollups(make_target):
    target = make_target()
    write_series(target, RUNNING, start=NOW, step_s=60, count=3)
    mark_up(target, NOW, {RUNNING: 1.0})
    fleet_tick_record(now=NOW)
    fleet_minute_rollup(NOW)
    rollup_run(now=NOW + timedelta(minutes=10))

    retention_run(now=NOW + timedelta(hours=49))
    assert list(FleetSum.objects.values_list("step_s", flat=True)) == [MINUTE_STEP_S]

    retention_run(now=NOW + timedelta(days=31))
    assert not FleetSum.objects.exists()


def test_a_subset_of_the_targets_is_summed_from_its_own_series(make_target):
    a, b = make_target(), make_target()
    for target, value in ((a, 1.0), (b, 2.0)):
        write_series(target, RUNNING, start=NOW - timedelta(minutes=5), step_s=15, count=4,
                     value=lambda i, v=value: v)  # fmt: skip
        mark_up(target, NOW, {RUNNING: 100.0})
    fleet_tick_record(now=NOW - timedelta(minutes=1))
    window = {"keys": [RUNNING], "start": NOW - timedelta(minutes=10), "end": NOW}

    everyone = fleet_series(**window, target_ids=[a.pk, b.pk])
    only_a = fleet_series(**window, target_ids=[a.pk])

    assert [v for v in everyone["series"][0]["v"] if v is not None] == [200.0]  # stored sums
    assert {v for v in only_a["series"][0]["v"] if v is not None} == {1.0}
