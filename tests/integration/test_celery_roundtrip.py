"""A task travels through the real Redis broker to a real worker process and back."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from celery import Celery

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("REDIS_URL", "")

pytestmark = [pytest.mark.integration, pytest.mark.enable_socket]


@pytest.fixture
def worker_queue():
    """Start `celery worker` on a private queue and stop it afterwards."""
    if not REDIS_URL:
        pytest.fail("REDIS_URL is not set: this test needs a real Redis (CI sets it).")
    queue = f"roundtrip-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings.local", REDIS_URL=REDIS_URL)
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            queue,
            "--concurrency",
            "1",
            "--pool",
            "solo",
            "--loglevel",
            "WARNING",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        yield queue
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def test_ping_round_trips_through_redis_to_a_worker(worker_queue):
    client = Celery("roundtrip-client", broker=REDIS_URL, backend=REDIS_URL)

    result = client.send_task("core.ping", queue=worker_queue)

    assert result.get(timeout=60).startswith("pong from ")
