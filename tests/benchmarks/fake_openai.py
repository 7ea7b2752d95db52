"""A small OpenAI-compatible server on loopback for the load generator's tests (asyncio).

It streams `/v1/completions` with fixed timings, counts tokens as words (+1 for a BOS) at
`/tokenize`, and can misbehave on demand: answer 500, omit the usage chunk, stop for good after
N requests, or stop early (fewer tokens than asked).
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field


@dataclass
class FakeConfig:
    model: str = "fake/model"
    ttft_s: float = 0.02
    itl_s: float = 0.005
    tokenize: bool = True
    status: int = 200
    usage: bool = True
    die_after: int | None = None  # close every connection from the (N+1)-th request on
    stop_after_tokens: int | None = None  # finish early (finish_reason "stop")
    count: object = None  # a tokenizer (text -> tokens); default: one per word and a BOS
    seen: list[dict] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def count_tokens(text: str) -> int:
    return len(text.split()) + 1  # a BOS, as vLLM's /tokenize counts by default


class FakeServer:
    def __init__(self, config: FakeConfig | None = None) -> None:
        self.config = config or FakeConfig()
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeServer:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode().split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)
                }
                length = int(headers.get("content-length", "0"))
                body = json.loads(await reader.readexactly(length)) if length else {}
                if not await self._route(method, path, headers, body, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _send(self, writer, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        await writer.drain()

    async def _route(self, method, path, headers, body, writer) -> bool:
        c = self.config
        if path == "/v1/models":
            await self._send(writer, 200, {"data": [{"id": c.model, "max_model_len": 4096}]})
            return True
        if path == "/tokenize" and c.tokenize:
            await self._send(writer, 200, {"count": self._count(body["prompt"])})
            return True
        if path != "/v1/completions":
            await self._send(writer, 404, {"detail": "Not Found"})
            return True
        self.requests += 1
        c.seen.append(body)
        c.headers.append(headers)
        if c.die_after is not None and self.requests > c.die_after:
            return False  # close without an answer
        if c.status != 200:
            await self._send(writer, c.status, {"error": "boom"})
            return True
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        asked = body["max_tokens"]
        tokens = min(asked, c.stop_after_tokens or asked)
        await asyncio.sleep(c.ttft_s)
        for i in range(tokens):
            if i:
                await asyncio.sleep(c.itl_s)
            last = i == tokens - 1
            reason = ("length" if tokens == asked else "stop") if last else None
            chunk = {"choices": [{"index": 0, "text": " tok", "finish_reason": reason}]}
            self._chunk(writer, b"data: " + json.dumps(chunk).encode() + b"\n\n")
            await writer.drain()
        if c.usage:
            usage = {"prompt_tokens": self._count(body["prompt"]), "completion_tokens": tokens}
            self._chunk(writer, b"data: " + json.dumps({"choices": [], "usage": usage}).encode()
                        + b"\n\n")  # fmt: skip
        self._chunk(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    def _count(self, text: str) -> int:
        return (self.config.count or count_tokens)(text)

    @staticmethod
    def _chunk(writer, data: bytes) -> None:
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
