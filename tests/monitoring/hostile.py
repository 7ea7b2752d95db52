"""A hostile metrics server: every way a target can make a poller work hard for nothing.

Routes (each under its own path, so one server plays many targets):
- `/ok/<n>/metrics`: a healthy vLLM page (recorded fixture).
- `/huge/metrics`: 150,000 label sets, about 9 MB (like the issue's 9.5 MB page).
- `/labels/metrics`: one sample with 5,000 labels.
- `/drip/metrics`: headers, then one short line every 0.5 s, forever.
- `/bomb/metrics`: a 100 MB page gzipped to ~100 KB (Content-Encoding: gzip).
- `/hang/metrics`: accepts, reads the request, never answers.
"""

from __future__ import annotations

import functools
import gzip
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
HUGE_SERIES = 150_000


@functools.cache
def healthy_page() -> bytes:
    return (FIXTURES / "vllm" / "v0_32_metrics_after.txt").read_bytes()


@functools.cache
def huge_page() -> bytes:
    head = "# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n"
    rows = (
        f'vllm:num_requests_running{{model_name="m{i}",engine="{i % 8}"}} 1\n'
        for i in range(HUGE_SERIES)
    )
    return (head + "".join(rows)).encode()


@functools.cache
def many_labels_page() -> bytes:
    labels = ",".join(f'l{i}="v"' for i in range(5000))
    return f"vllm:num_requests_running{{{labels}}} 1\n".encode()


@functools.cache
def gzip_bomb() -> bytes:
    return gzip.compress(b"0" * (100 * 1024 * 1024), compresslevel=9)


class HostileHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stop: threading.Event

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0]
        try:
            if path.startswith("/ok/"):
                self._send(healthy_page())
            elif path == "/huge/metrics":
                self._send(huge_page())
            elif path == "/labels/metrics":
                self._send(many_labels_page())
            elif path == "/bomb/metrics":
                self._send(gzip_bomb(), {"Content-Encoding": "gzip"})
            elif path == "/drip/metrics":
                self._drip()
            elif path == "/hang/metrics":
                self.stop.wait(120)
            else:
                self._send(b"not here", status=404)
        except OSError:
            pass  # the poller hung up: that is the point

    def _send(self, body: bytes, headers: dict[str, str] | None = None, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        n = 0
        while not self.stop.wait(0.5):
            line = f'drip_metric{{n="{n}"}} 1\n'.encode()
            self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
            self.wfile.flush()
            n += 1

    def log_message(self, *args: Any) -> None:
        return


@contextmanager
def hostile_server() -> Iterator[str]:
    """Serve the hostile routes on 127.0.0.1; yield the base URL."""
    stop = threading.Event()
    handler = type("Handler", (HostileHandler,), {"stop": stop})

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            if not isinstance(sys.exc_info()[1], OSError):
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


if __name__ == "__main__":  # serve for manual probing: python -m tests.monitoring.hostile
    with hostile_server() as base:
        print(base, flush=True)
        threading.Event().wait()
