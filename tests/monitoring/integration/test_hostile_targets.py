"""Hostile targets under a real worker (`make run`'s: concurrency 2, beat inside) do not stop
the healthy ones' polls (issue 15, item 3).

Two targets accept and never answer, one drips a line every 0.5 s, one serves a gzip bomb, one
a 9 MB page of 150k label sets; two healthy vLLM targets share the same two worker processes.
Without a broker server: the filesystem broker of a checkout without REDIS_URL, and a private
SQLite file.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.monitoring.hostile import hostile_server
from tests.monitoring.integration.worker import celery_worker, manage

STARTUP_S = 90  # the worker's start on a busy machine
# After the first round (every target new, none known to be hostile yet), the healthy targets
# must keep their 5 s schedule for this long.
WARM_UP_S = 12
MEASURED_S = 30
INTERVAL_S = 5

pytestmark = [pytest.mark.integration, pytest.mark.enable_socket]


def _unix(ts: str) -> float:
    from datetime import UTC, datetime

    return datetime.fromisoformat(ts).replace(tzinfo=UTC).timestamp()


def _wait_for_first_poll(db_file: Path, worker: subprocess.Popen) -> float:
    """Return the unix time of the first poll the worker stored."""
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        assert worker.poll() is None, "the worker exited early"
        with sqlite3.connect(db_file, timeout=30) as db:
            row = db.execute("SELECT MIN(ts) FROM monitoring_sample").fetchone()
        if row[0]:
            return _unix(row[0])
        time.sleep(1)
    pytest.fail(f"no poll within {STARTUP_S} s of starting the worker")


def test_hostile_targets_do_not_starve_the_healthy_ones(tmp_path):
    db_file = tmp_path / "db.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"sqlite:///{db_file}?timeout=30",
        SERVEPLAN_VAR_DIR=str(tmp_path / "var"),
        SECRET_KEY="integration-test-secret",
        DEBUG="false",
    )
    manage(env, "migrate", "--noinput")
    with hostile_server() as base:
        targets = {
            "healthy-1": f"{base}/ok/1",
            "healthy-2": f"{base}/ok/2",
            "hang-1": f"{base}/hang",
            "hang-2": f"{base}/hang?second",
            "drip": f"{base}/drip",
            "bomb": f"{base}/bomb",
            "huge": f"{base}/huge",
        }
        script = "from monitoring.services import target_create\n" + "".join(
            f"target_create(name={n!r}, kind='vllm', base_url={u!r}, poll_interval_s={INTERVAL_S})"
            "\n"
            for n, u in targets.items()
        )
        manage(env, "shell", "-c", script)
        with celery_worker(env, tmp_path, concurrency=2) as worker:
            first_poll = _wait_for_first_poll(db_file, worker)
            time.sleep(max(0.0, first_poll + WARM_UP_S + MEASURED_S + 2 - time.time()))

    log = (tmp_path / "worker.log").read_text()
    with sqlite3.connect(db_file) as db:
        rows = {
            name: (status, kind, missed)
            for name, status, kind, missed in db.execute(
                "SELECT name, last_status, last_error_kind, missed_polls FROM monitoring_target"
            )
        }
        polls = db.execute(
            "SELECT t.name, s.ts FROM monitoring_sample s JOIN monitoring_target t "
            "ON s.target_id = t.id WHERE s.series = 'poll.up' AND s.value = 1 ORDER BY s.ts"
        ).fetchall()
    window = (first_poll + WARM_UP_S, first_poll + WARM_UP_S + MEASURED_S)
    for name in ("healthy-1", "healthy-2"):
        times = [_unix(ts) for n, ts in polls if n == name]
        measured = [t for t in times if window[0] <= t <= window[1]]
        gaps_s = [b - a for a, b in zip(measured, measured[1:], strict=False)]
        assert rows[name][0] == "ok", (name, rows, log[-2000:])
        # 30 s at a 5 s interval: 6 polls on schedule; none more than two intervals apart.
        assert len(measured) >= 5, (name, measured, window, rows, log[-2000:])
        assert max(gaps_s) <= 2 * INTERVAL_S, (name, gaps_s)
    assert rows["hang-1"][:2] == ("error", "timeout"), rows
    assert rows["hang-2"][:2] == ("error", "timeout"), rows
    assert rows["drip"][:2] == ("error", "timeout"), rows
    assert rows["bomb"][:2] == ("error", "too_large"), rows
    assert rows["huge"][:2] == ("error", "limit"), rows
