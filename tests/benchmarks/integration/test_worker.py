"""The benchmarks queue's own worker runs a benchmark while the polling worker keeps its beat.

As `make run` starts them (scripts/run-dev): a `celery worker --beat` on the default queue that
polls, and a `celery worker -Q benchmarks`. A SQLite file is shared by both and this test; the
broker is Redis database 13 of REDIS_URL's server. A benchmark of 40 s is queued as the page does;
every target keeps being polled every 5 s while it runs.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime

import pytest

from tests.monitoring.integration.test_celery_pollers import _redis_db
from tests.monitoring.integration.worker import ROOT, celery_worker, manage

REDIS_URL = os.environ.get("REDIS_URL", "")
pytestmark = [pytest.mark.integration, pytest.mark.enable_socket]
POLL_INTERVAL_S = 5


def _gaps_s(stamps: list[str]) -> list[float]:
    times = sorted(datetime.fromisoformat(s.replace(" ", "T")) for s in stamps)
    return [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]


@pytest.fixture
def simulator():
    from monitoring.simulator import Simulator

    sim = Simulator(port=0, vllm_count=2, ray=False, gpu_machines=0, faults=False)
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()


def test_a_benchmark_runs_on_its_own_worker_and_polls_keep_their_schedule(tmp_path, simulator):
    if not REDIS_URL:
        pytest.fail("REDIS_URL is not set: this test needs a real Redis (CI sets it).")
    db_file = tmp_path / "db.sqlite3"
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"sqlite:///{db_file}?timeout=30",
        REDIS_URL=_redis_db(REDIS_URL, 13),
        SERVEPLAN_VAR_DIR=str(tmp_path / "var"),
        SECRET_KEY="integration-test-secret",
        DEBUG="false",
    )
    manage(env, "migrate", "--noinput")
    llama = simulator.targets()[0]
    other = simulator.targets()[1]
    manage(env, "shell", "-c", (
        "from monitoring.services import target_create\n"
        f"target_create(name='bench-me', kind='vllm', base_url={llama.base_url!r}, "
        f"poll_interval_s={POLL_INTERVAL_S})\n"
        f"target_create(name='watched', kind='vllm', base_url={other.base_url!r}, "
        f"poll_interval_s={POLL_INTERVAL_S})\n"
    ))  # fmt: skip
    bench_log = open(tmp_path / "bench-worker.log", "w")  # noqa: SIM115
    bench_worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "benchmarks",
         "--concurrency", "1", "--loglevel", "INFO", "--hostname", "benchmarks@%h"],
        cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=bench_log,
    )  # fmt: skip
    try:
        with celery_worker(env, tmp_path, concurrency=2):
            time.sleep(12)  # both workers up, the first polls done
            manage(env, "shell", "-c", (
                "from benchmarks.services import run_create\n"
                "from monitoring.models import Target\n"
                "run_create(target=Target.objects.get(name='bench-me'), data={'requests': 2000, "
                "'input_tokens': 64, 'output_tokens': 32, 'concurrency': [8], "
                "'max_duration_s': 40})\n"
            ))  # fmt: skip
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                with sqlite3.connect(db_file) as db:
                    status = db.execute("SELECT status FROM benchmarks_benchmarkrun").fetchone()
                if status and status[0] not in ("queued", "running"):
                    break
                time.sleep(2)
    finally:
        os.killpg(bench_worker.pid, signal.SIGTERM)
        bench_worker.wait(timeout=30)
        bench_log.close()
    poll_log = (tmp_path / "worker.log").read_text()
    bench_log_text = (tmp_path / "bench-worker.log").read_text()
    logs = poll_log[-2000:] + bench_log_text[-2000:]
    # The benchmarks worker ran it, not the polling worker.
    assert "benchmarks.run" in bench_log_text, logs
    assert "benchmarks.run" not in poll_log, logs
    with sqlite3.connect(db_file) as db:
        status, started, finished, results = db.execute(
            "SELECT status, started_at, finished_at, results FROM benchmarks_benchmarkrun"
        ).fetchone()
        polls = {
            name: [ts for (ts,) in db.execute(
                "SELECT s.ts FROM monitoring_sample s JOIN monitoring_target t "
                "ON s.target_id = t.id WHERE t.name = ? AND s.series = 'poll.up' "
                "AND s.ts BETWEEN ? AND ?", (name, started, finished))]
            for name in ("bench-me", "watched")
        }  # fmt: skip
    # The duration cap stopped it: "failed" with its partial results, as the caps say.
    assert status in ("succeeded", "failed"), (status, logs)
    summary = json.loads(results)["levels"][0]["summary"]
    assert summary["completed"] > 100, (summary, logs)
    for name, stamps in polls.items():
        gaps = _gaps_s(stamps)
        assert len(stamps) >= 5, (name, stamps, logs)
        # The schedule holds: no poll more than one interval late while the benchmark ran.
        assert max(gaps) <= 2 * POLL_INTERVAL_S, (name, gaps)
