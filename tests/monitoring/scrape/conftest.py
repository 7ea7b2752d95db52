"""A loopback HTTP server whose behaviour each fetch test writes (status, redirects, drips)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent.parent / "fixtures"

Behaviour = Callable[[BaseHTTPRequestHandler], None]


def reply(status: int = 200, body: bytes = b"", headers: dict[str, str] | None = None) -> Behaviour:
    """Return a behaviour that answers once with a fixed response."""

    def behave(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    return behave


@dataclass
class FakeServer:
    base: str
    port: int
    routes: dict[str, Behaviour] = field(default_factory=dict)
    seen: list[dict[str, str]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    """Yield a server on 127.0.0.1; set `routes[path] = behaviour` (path without query)."""
    holder: dict[str, FakeServer] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            server = holder["s"]
            server.seen.append({"path": self.path, **{k: v for k, v in self.headers.items()}})
            behave = server.routes.get(self.path.split("?", 1)[0]) or server.routes.get(self.path)
            try:
                if behave is None:
                    reply(404, b"not here")(self)
                else:
                    behave(self)
            except OSError:
                pass  # the client hung up (timeout, size cap): expected in these tests

        def log_message(self, *args: Any) -> None:
            return

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            if not isinstance(sys.exc_info()[1], OSError):  # hung-up clients are expected
                super().handle_error(request, client_address)

    httpd = Server(("127.0.0.1", 0), Handler)
    port = httpd.server_address[1]
    holder["s"] = FakeServer(base=f"http://127.0.0.1:{port}", port=port)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield holder["s"]
    finally:
        holder["s"].stop.set()
        httpd.shutdown()
        httpd.server_close()


def fixture_text(*parts: str) -> str:
    return FIXTURES.joinpath(*parts).read_text()
