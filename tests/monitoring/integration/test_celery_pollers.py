"""The real Celery scheduler and worker poll the simulator through Redis into a real database.

Everything runs as it does under `make run`: `manage.py migrate`, then one `celery worker
--beat` process (beat runs `monitoring.schedule_polls` every 5 s). The database is a private
SQLite file shared by the worker and this test; the broker is Redis database 14 of REDIS_URL's
server, so that other suites' queues are untouched.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.monitoring.integration.worker import celery_worker, manage

REDIS_URL = os.environ.get("REDIS_URL", "")

pytestmark = [pytest.mark.integration, pytest.mark.enable_socket]


def _redis_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", parts.query, parts.fragment))


class _Slow(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        time.sleep(30)

    def log_message(self, *args) -> None:
        return


@pytest.fixture
def slow_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_beat_and_worker_poll_every_target_and_a_slow_or_dead_one_delays_nobody(
    tmp_path, simulator, slow_server
):
    if not REDIS_URL:
        pytest.fail("REDIS_URL is not set: this test needs a real Redis (CI sets it).")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]
    db_file = tmp_path / "db.sqlite3"
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"sqlite:///{db_file}?timeout=30",
        REDIS_URL=_redis_db(REDIS_URL, 14),
        SERVEPLAN_VAR_DIR=str(tmp_path / "var"),
        SECRET_KEY="integration-test-secret",
        DEBUG="false",
    )
    manage(env, "migrate", "--noinput")
    targets = [(t.name, t.kind, t.base_url) for t in simulator.targets()]
    targets += [("dead", "vllm", f"http://127.0.0.1:{dead_port}"), ("slow", "vllm", slow_server)]
    script = "from monitoring.services import target_create\n" + "".join(
        f"target_create(name={n!r}, kind={k!r}, base_url={u!r}, poll_interval_s=5)\n"
        for n, k, u in targets
    )
    manage(env, "shell", "-c", script)

    with celery_worker(env, tmp_path, concurrency=3):
        time.sleep(40)

    err = (tmp_path / "worker.log").read_text()
    with sqlite3.connect(db_file) as db:
        rows = dict(
            (name, (status, kind, failures))
            for name, status, kind, failures in db.execute(
                "SELECT name, last_status, last_error_kind, consecutive_failures "
                "FROM monitoring_target"
            )
        )
        ups = dict(
            db.execute(
                "SELECT t.name, COUNT(*) FROM monitoring_sample s JOIN monitoring_target t "
                "ON s.target_id = t.id WHERE s.series = 'poll.up' AND s.value = 1 GROUP BY t.name"
            ).fetchall()
        )
        rates = db.execute(
            "SELECT COUNT(*) FROM monitoring_sample WHERE series = 'vllm.generation_tokens_per_s'"
        ).fetchone()[0]
    healthy = [name for name, _kind, _url in targets if name not in ("dead", "slow")]
    for name in healthy:
        assert rows[name][0] == "ok", (name, rows[name], err[-2000:])
        # 40 s at a 5 s interval: about 8 polls; the slow and dead targets must not eat them.
        assert ups.get(name, 0) >= 5, (name, ups, err[-2000:])
    assert rows["dead"][:2] == ("error", "connect")
    assert rows["dead"][2] >= 3
    assert rows["slow"][:2] == ("error", "timeout")
    assert rates > 0  # rates derived from the previous snapshot kept between polls
