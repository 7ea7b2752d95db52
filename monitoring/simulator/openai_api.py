"""The OpenAI API of a simulated vLLM server: completions, chat completions, tokenize.

Streaming or not, with the token timings of ServePlan's serving model (serving.py) at the number
of requests the server is serving at that moment; every answered request enters the server's
/metrics (tokens, finished reasons, TTFT, ITL and E2E histograms, running requests). Tokens are
words: the tokenizer counts a prompt's words plus one BOS, and the text generated is words.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from .vllm_sim import SimVllm

JSON = "application/json"
SSE = "text/event-stream"
OUTPUT_WORDS = ("the", "plan", "holds", "and", "the", "server", "answers", "in", "time")
MAX_BODY_BYTES = 4 * 1024 * 1024

Body = bytes | AsyncIterator[bytes]  # an async iterator is streamed (aio_server.py)


def count_tokens(text: str) -> int:
    """Return the simulated tokenizer's count: one token per word and a BOS."""
    return len(text.split()) + 1


def _error(status: int, message: str) -> tuple[int, str, Body]:
    return status, JSON, json.dumps({"object": "error", "message": message,
                                     "code": status}).encode()  # fmt: skip


def _prompt_text(body: dict[str, Any], chat: bool) -> str | None:
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list):
            return None
        return " ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    prompt = body.get("prompt")
    if isinstance(prompt, list):
        prompt = " ".join(str(p) for p in prompt)
    return prompt if isinstance(prompt, str) else None


def handle(sim: SimVllm, endpoint: str, raw: bytes) -> tuple[int, str, Body] | None:
    """Answer a POST to `endpoint`, or return None when it is not an OpenAI route."""
    if endpoint not in ("/v1/completions", "/v1/chat/completions", "/tokenize"):
        return None
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        return _error(400, "the body is not JSON")
    if not isinstance(body, dict):
        return _error(400, "the body is not a JSON object")
    chat = endpoint == "/v1/chat/completions"
    text = _prompt_text(body, chat)
    if text is None:
        return _error(400, "messages are required" if chat else "prompt is required")
    if endpoint == "/tokenize":
        count = count_tokens(text)
        return (
            200,
            JSON,
            json.dumps(
                {"count": count, "max_model_len": sim.profile.max_model_len, "tokens": []}
            ).encode(),
        )
    if body.get("model") not in (None, sim.profile.model):
        return _error(404, f"The model `{body.get('model')}` does not exist.")
    prompt_tokens = count_tokens(text)
    asked = body.get("max_tokens", body.get("max_completion_tokens", 16))
    if not isinstance(asked, int) or asked < 1:
        return _error(400, "max_tokens must be a positive integer")
    if prompt_tokens + asked > sim.profile.max_model_len:
        return _error(400, f"This model's maximum context length is {sim.profile.max_model_len}")
    usage = bool((body.get("stream_options") or {}).get("include_usage"))
    request = _Request(sim, chat=chat, prompt_tokens=prompt_tokens, output_tokens=asked,
                       usage=usage)  # fmt: skip
    if body.get("stream"):
        return 200, SSE, request.stream()
    return 200, JSON, request.whole()


class _Request:
    def __init__(
        self, sim: SimVllm, *, chat: bool, prompt_tokens: int, output_tokens: int, usage: bool
    ) -> None:
        self.sim = sim
        self.chat = chat
        self.prompt_tokens = prompt_tokens
        self.output_tokens = output_tokens
        self.usage = usage
        self.id = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}"
        self.created = int(time.time())

    async def _tokens(self) -> AsyncIterator[tuple[int, str]]:
        """Sleep each token's time and yield (index, word); account the request at the end."""
        sim = self.sim
        start = time.perf_counter()
        in_flight = sim.begin_request()
        ttft = itl_sum = 0.0
        itls: list[float] = []
        done = 0
        try:
            timing = sim.serving.timing(in_flight=in_flight, prompt_tokens=self.prompt_tokens,
                                        output_tokens=self.output_tokens)  # fmt: skip
            await asyncio.sleep(timing.ttft_s)
            ttft = time.perf_counter() - start
            for i in range(self.output_tokens):
                if i:
                    gap = sim.serving.timing(in_flight=sim.live_requests,
                                             prompt_tokens=self.prompt_tokens,
                                             output_tokens=self.output_tokens).itl_s  # fmt: skip
                    await asyncio.sleep(gap)
                    itls.append(gap)
                    itl_sum += gap
                done = i + 1
                yield i, OUTPUT_WORDS[i % len(OUTPUT_WORDS)]
        finally:
            sim.end_request(prompt_tokens=self.prompt_tokens, output_tokens=done,
                            ttft_s=ttft, itls_s=itls,
                            e2e_s=time.perf_counter() - start,
                            complete=done == self.output_tokens)  # fmt: skip

    def _chunk(self, word: str | None, reason: str | None, first: bool) -> dict[str, Any]:
        if self.chat:
            delta: dict[str, Any] = {} if word is None else {"content": f" {word}"}
            if first:
                delta["role"] = "assistant"
            choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": reason}
            kind = "chat.completion.chunk"
        else:
            choice = {"index": 0, "text": "" if word is None else f" {word}",
                      "logprobs": None, "finish_reason": reason}  # fmt: skip
            kind = "text_completion"
        return {"id": self.id, "object": kind, "created": self.created,
                "model": self.sim.profile.model, "choices": [choice]}  # fmt: skip

    def _usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.prompt_tokens + self.output_tokens,
        }

    async def stream(self) -> AsyncIterator[bytes]:
        last = self.output_tokens - 1
        async for i, word in self._tokens():
            chunk = self._chunk(word, "length" if i == last else None, first=i == 0)
            yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
        if self.usage:
            chunk = {**self._chunk(None, None, first=False), "choices": [],
                     "usage": self._usage()}  # fmt: skip
            yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
        yield b"data: [DONE]\n\n"

    async def whole(self) -> AsyncIterator[bytes]:
        words = [word async for _, word in self._tokens()]
        text = " " + " ".join(words)
        if self.chat:
            message = {"role": "assistant", "content": text}
            choice: dict[str, Any] = {"index": 0, "finish_reason": "length", "message": message}
            kind = "chat.completion"
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": "length"}
            kind = "text_completion"
        yield json.dumps({"id": self.id, "object": kind, "created": self.created,
                          "model": self.sim.profile.model, "choices": [choice],
                          "usage": self._usage()}).encode()  # fmt: skip
