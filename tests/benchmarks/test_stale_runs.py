"""A run whose worker died (its progress reports stopped) is ended as failed, not left running."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks import services
from benchmarks.models import BenchmarkRun, RunStatus

pytestmark = pytest.mark.django_db

SMALL = {"requests": 4, "input_tokens": 16, "output_tokens": 3, "concurrency": [2]}


def _running(target, planner, *, silent_s: float, progress=None) -> BenchmarkRun:
    """A run the worker started, whose last progress report was `silent_s` ago."""
    run = services.run_create(target=target, data=SMALL, actor=planner, enqueue=False)
    at = timezone.now() - timedelta(seconds=silent_s)
    BenchmarkRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, started_at=at, heartbeat_at=at, progress=progress or {}
    )
    return BenchmarkRun.objects.get(pk=run.pk)


def test_a_silent_run_is_ended_as_failed_with_its_progress_kept(sim_target, planner, settings):
    settings.BENCHMARK_STALE_AFTER_S = 300
    run = _running(sim_target, planner, silent_s=301, progress={"done": 3, "total": 4})

    assert services.runs_end_stale() == 1

    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.finished_at is not None
    assert "stopped reporting for 300 s" in run.error
    assert run.progress == {"done": 3, "total": 4}
    assert run.history.first().status == RunStatus.FAILED  # the ending is audited


def test_a_run_that_reports_is_left_alone(sim_target, planner, settings):
    settings.BENCHMARK_STALE_AFTER_S = 300
    run = _running(sim_target, planner, silent_s=10)

    assert services.runs_end_stale() == 0
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING


def test_a_dead_run_does_not_block_the_next_benchmark_of_its_endpoint(
    sim_target, planner, settings
):
    settings.BENCHMARK_STALE_AFTER_S = 300
    dead = _running(sim_target, planner, silent_s=3600)

    fresh = services.run_create(target=sim_target, data=SMALL, actor=planner, enqueue=False)

    dead.refresh_from_db()
    assert dead.status == RunStatus.FAILED
    assert fresh.status == RunStatus.QUEUED


def test_progress_reports_keep_the_heartbeat(sim_target, planner):
    from benchmarks.loadgen import Progress

    run = _running(sim_target, planner, silent_s=3600)
    fields = {f: 0 for f in Progress.__dataclass_fields__}
    services._store_progress(
        run.pk,
        Progress(**{**fields, "eta_s": None, "ttft_median_ms": None, "tpot_median_ms": None}),
    )
    run.refresh_from_db()
    assert timezone.now() - run.heartbeat_at < timedelta(minutes=1)
    assert services.runs_end_stale() == 0


def test_the_beat_ends_stale_runs_every_minute_on_the_default_queue():
    from benchmarks.tasks import END_STALE_RUNS
    from config.celery import app

    entry = app.conf.beat_schedule[END_STALE_RUNS]
    assert entry["task"] == END_STALE_RUNS
    assert entry["schedule"] == 60.0
    # Not the benchmarks queue: its one worker may be busy with a run for minutes.
    assert entry["options"]["queue"] == "celery"
    assert app.amqp.router.route(entry["options"], END_STALE_RUNS)["queue"].name == "celery"
