"""One streamed OpenAI /v1/completions request, timed as `vllm bench serve` times it.

vLLM 0.32's client (lib/endpoint_request_func.py, async_request_openai_completions): the clock
starts before the request is sent; the first chunk that carries `choices` gives TTFT, every later
one an inter-token gap; the latency ends at the last such chunk (not at `[DONE]`); the final
usage chunk gives the output tokens and replaces the prompt length with the server's count.
A request that never streamed a token, or whose stream broke, has failed.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import httpx

from benchmarks.loadgen.results import RequestRecord

MAX_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True, kw_only=True)
class CompletionRequest:
    index: int
    model: str
    prompt: str
    prompt_tokens: int  # as planned (the server's usage figure replaces it)
    output_tokens: int
    ignore_eos: bool = True


def payload(req: CompletionRequest) -> dict[str, Any]:
    """Return the request body `vllm bench serve --backend openai` sends."""
    body: dict[str, Any] = {
        "model": req.model,
        "prompt": req.prompt,
        "repetition_penalty": 1.0,
        "max_tokens": req.output_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if req.ignore_eos:
        body["ignore_eos"] = True
    return body


def _apply(message: bytes, record: RequestRecord, stamp: float, last: float) -> float:
    """Account one SSE message; return the time of the latest token chunk."""
    message = message.strip()
    if not message or message.startswith(b":"):
        return last
    data = message.removeprefix(b"data:").strip()
    if data == b"[DONE]":
        return last
    chunk = json.loads(data)
    choices = chunk.get("choices")
    if choices:
        if last == 0.0:  # the first token
            record.ttft_s = stamp
        else:
            record.itl_s.append(stamp - last)
        reason = choices[0].get("finish_reason")
        if reason:
            record.finish_reason = str(reason)
        return stamp
    usage = chunk.get("usage")
    if usage:
        if usage.get("completion_tokens") is not None:
            record.output_tokens = int(usage["completion_tokens"])
        if usage.get("prompt_tokens") is not None:
            record.prompt_tokens = int(usage["prompt_tokens"])
    return last


async def stream_completion(
    client: httpx.AsyncClient, req: CompletionRequest, *, level_start: float
) -> tuple[RequestRecord, bool]:
    """Send one request; return its record and whether the server failed it (refused, reset,
    timed out, a broken stream or a 5xx: what counts toward breaking the run off)."""
    record = RequestRecord(
        index=req.index, prompt_tokens=req.prompt_tokens, asked_output_tokens=req.output_tokens
    )
    sent = time.perf_counter()
    record.start_s = sent - level_start
    last = 0.0  # seconds after `sent` of the latest token chunk (0: none yet)
    chunks = 0
    try:
        async with client.stream("POST", "/v1/completions", json=payload(req)) as response:
            if response.status_code != 200:
                body = (await response.aread())[:MAX_ERROR_CHARS].decode(errors="replace")
                record.error = f"HTTP {response.status_code}: {body}".strip()
                return record, response.status_code >= 500
            pending = b""
            async for data in response.aiter_raw():
                stamp = time.perf_counter() - sent
                pending += data
                *messages, pending = pending.split(b"\n\n")
                for message in messages:
                    before = last
                    last = _apply(message, record, stamp, last)
                    chunks += last != before
            if pending.strip():
                last = _apply(pending, record, time.perf_counter() - sent, last)
    except httpx.TransportError as exc:
        record.error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
        return record, True
    except (ValueError, UnicodeDecodeError) as exc:
        record.error = f"unreadable stream: {exc}"[:MAX_ERROR_CHARS]
        return record, False
    if last == 0.0:
        record.error = "no token was streamed"
        return record, False
    record.success = True
    record.latency_s = last
    if record.output_tokens == 0:
        # No usage chunk: one token per streamed chunk (vLLM would count with its tokenizer).
        record.output_tokens = chunks
    return record, False
