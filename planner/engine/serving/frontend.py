"""The API server in front of the engine: one process that every request and every token crosses.

vLLM V1 runs the OpenAI server (HTTP, tokenisation, request set-up, incremental detokenisation,
one server-sent event per output token) in one Python process apart from the engine core, and
`vllm bench serve` reads the stream in one asyncio process too. Both are serial, so the GPU can
wait for them. Two consequences the step model alone misses:

- a burst does not reach the scheduler at once: the server admits its requests one after the
  other (set-up plus the tokenisation of the prompt), between the tokens it streams, so a small
  model under a burst of 500 runs a batch of tens, not hundreds;
- the token stream has a ceiling: a step's tokens cannot leave faster than the server streams
  them, which binds when the GPU is fast and the model small.

A lone request's own trip through the server stays in `request_overhead_ms`; this adds only the
waiting behind other requests and tokens. The constants are in planner/engine/assumptions.py.
"""

from __future__ import annotations

from planner.engine.serving.context import ServingContext


class ApiServer:
    """The server's serial timeline: when it is next free (ms of simulated time)."""

    __slots__ = ("ctx", "free_ms")

    def __init__(self, ctx: ServingContext):
        self.ctx = ctx
        self.free_ms = 0.0

    def next_admission_ms(self, sent_ms: float) -> float:
        """Return when a request sent at `sent_ms` would start being set up."""
        return max(sent_ms, self.free_ms)

    def admit(self, sent_ms: float, prompt_tokens: int) -> float:
        """Set up one request (sent at `sent_ms`); return when the scheduler can see it."""
        start = max(sent_ms, self.free_ms)
        ctx = self.ctx
        tokenise_ms = prompt_tokens * ctx.frontend_prompt_token_us / 1e3
        self.free_ms = start + ctx.frontend_request_ms + tokenise_ms
        return start

    def stream(self, start_ms: float, gpu_ms: float, tokens: float) -> float:
        """Stream `tokens` produced by steps that took `gpu_ms` from `start_ms`; return their end.

        The server interleaves streaming with the set-up of queued requests (one event loop):
        the step's tokens wait for at most the request being set up, and they push the queued
        set-ups back by their own streaming time. A step ends when both the GPU and the stream
        are done.
        """
        ctx = self.ctx
        stream_ms = tokens * ctx.frontend_token_us / 1e3
        busy_ms = min(max(self.free_ms - start_ms, 0.0), ctx.frontend_request_ms)
        self.free_ms = max(self.free_ms, start_ms) + stream_ms
        return start_ms + max(gpu_ms, busy_ms + stream_ms)
