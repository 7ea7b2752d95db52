"""The simulator's main port on one asyncio loop (in a thread): GET routes and OpenAI streams.

A thread per connection (http.server) could not stream 64 requests at once: every token woke a
thread that then queued for the GIL, and TTFTs grew tenfold (bench/bench_benchmark_runner.py).
Here a stream is a coroutine; GET routes, which may sleep (a "slow" scrape), run in threads.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from typing import Any

MAX_HEAD_BYTES = 64 * 1024
GetRoute = Callable[[str], tuple[int, str, bytes]]
PostRoute = Callable[[str, bytes], tuple[int, str, Any]]


class AsyncHttpServer:
    """HTTP/1.1 with keep-alive; bodies are bytes or async iterators (sent chunked)."""

    def __init__(self, host: str, port: int, get: GetRoute, post: PostRoute, max_body: int) -> None:
        self.host, self.port = host, port
        self._get, self._post, self._max_body = get, post, max_body
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="sim-get")
        self._thread = threading.Thread(target=self._run, name="sim-aio", daemon=True)

    def start(self) -> int:
        """Bind and serve; return the port. Raises OSError when it is taken."""
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise self._error
        return self.port

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stopped.set)
            self._thread.join(10)
        self._threads.shutdown(wait=False, cancel_futures=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stopped = asyncio.Event()
        try:
            server = await asyncio.start_server(self._client, self.host, self.port, backlog=1024)
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stopped.wait()
            server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass  # the client went away or sent garbage
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEAD_BYTES:
            return False
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
        headers = {
            k.strip().lower(): v.strip()
            for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)
        }
        keep = headers.get("connection", "").lower() != "close"
        if method == "GET":
            loop = asyncio.get_running_loop()
            status, ctype, body = await loop.run_in_executor(self._threads, self._get, path)
        elif method == "POST":
            length = int(headers.get("content-length") or 0)
            if not 0 <= length <= self._max_body:
                await self._send(writer, 413, "text/plain", b"", keep=False)
                return False
            status, ctype, body = self._post(path, await reader.readexactly(length))
        else:
            status, ctype, body, keep = 405, "text/plain", b"", False
        await self._send(writer, status, ctype, body, keep=keep)
        return keep

    async def _send(self, writer: asyncio.StreamWriter, status: int, ctype: str, body: Any,
                    *, keep: bool) -> None:  # fmt: skip
        reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "?"
        head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
        if not keep:
            head += "Connection: close\r\n"
        if isinstance(body, bytes):
            writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            await writer.drain()
            return
        stream: AsyncIterator[bytes] = body
        writer.write(f"{head}Transfer-Encoding: chunked\r\n\r\n".encode())
        try:
            async for piece in stream:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        finally:
            await stream.aclose()  # type: ignore[attr-defined]  # account an abandoned request
