"""Fixtures of the monitoring tests: targets, the simulator, a scriptable HTTP server."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from monitoring.models import Target
from monitoring.services import target_create

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def make_target(db) -> Callable[..., Target]:
    counter = iter(range(1, 10_000))

    def make(**overrides: Any) -> Target:
        n = next(counter)
        fields = {
            "name": f"target-{n}",
            "kind": "vllm",
            "base_url": f"http://127.0.0.1:9/vllm/{n}",
        }
        fields.update(overrides)
        return target_create(**fields)

    return make


@pytest.fixture
def read_only_allowed(db, settings) -> Callable[..., None]:
    """Let read-only targets be created: a Prometheus is configured (nothing listens: reads
    fail as "store unavailable" unless a test installs its own reader) and the jobs given
    (vllm, ray, gpu by default) are in the selector policy."""
    from monitoring.models import AllowedJob

    if not settings.MONITORING_PROMETHEUS_URL:
        settings.MONITORING_PROMETHEUS_URL = "http://127.0.0.1:9"

    def allow(*jobs: str) -> None:
        for job in jobs:
            AllowedJob.objects.get_or_create(name=job)

    allow("vllm", "ray", "gpu")
    return allow


@pytest.fixture
def simulator() -> Iterator[Any]:
    """A simulator on free loopback ports, without random faults (tests add their own).

    No GPU exporters: the GPU tests start their own (tests/monitoring/test_machines.py).
    """
    from monitoring.simulator import Simulator

    sim = Simulator(port=0, vllm_count=2, ray=True, gpu_machines=0, faults=False)
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()


class Script:
    """What the scriptable server answers: a callable path -> (status, headers, body chunks)."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        self.gets: list[tuple[str, dict[str, str]]] = []
        self.route: Callable[[str], tuple[int, dict[str, str], Any]] = lambda path: (
            200,
            {},
            [b""],
        )
        # What a POST (a webhook delivery) gets back: 204 without a body unless a test says.
        self.post_route: Callable[[str], tuple[int, dict[str, str], Any]] = lambda path: (
            204,
            {"Content-Length": "0"},
            [],
        )


@pytest.fixture
def http_server() -> Iterator[tuple[str, Script]]:
    """A threaded HTTP server on 127.0.0.1 whose answers a test sets; yields (base URL, script)."""
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            script.gets.append((self.path, dict(self.headers)))
            self._answer(*script.route(self.path))

        def _answer(self, status: int, headers: dict[str, str], chunks: Any) -> None:
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if "Content-Length" not in headers and "Transfer-Encoding" not in headers:
                    body = b"".join(chunks)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            script.posts.append((self.path, dict(self.headers), self.rfile.read(length)))
            self._answer(*script.post_route(self.path))

        def log_message(self, *args: Any) -> None:
            return

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            return  # a poller that gave up (timeout, size cap) resets the connection

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", script
    finally:
        server.shutdown()
        server.server_close()
