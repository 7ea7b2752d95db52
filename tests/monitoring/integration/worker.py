"""A real `celery worker --beat` for integration tests, started and stopped as `make run` does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]


def manage(env: dict[str, str], *args: str) -> str:
    """Run `manage.py` with `env`; fail the test with its stderr when it fails."""
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@contextmanager
def celery_worker(env: dict[str, str], tmp_path: Path, *, concurrency: int) -> Iterator[Any]:
    """Run a worker with beat inside (its log: tmp_path/worker.log); stop it and its children."""
    worker = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "config", "worker", "--beat",
            "--concurrency", str(concurrency), "--loglevel", "WARNING",
            "--schedule-filename", str(tmp_path / "celerybeat-schedule"),
        ],
        cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "worker.log", "w"),  # noqa: SIM115
    )  # fmt: skip
    try:
        yield worker
        assert worker.poll() is None, "the worker exited early"
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
