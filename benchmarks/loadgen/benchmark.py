"""A whole benchmark: read the served model, build the prompts, run each level in turn."""

from __future__ import annotations

import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from benchmarks.loadgen.client import CompletionRequest
from benchmarks.loadgen.connections import ClientPool
from benchmarks.loadgen.prompts import TokenCounter, build_prompts
from benchmarks.loadgen.results import LevelResult, Outcome
from benchmarks.loadgen.runner import ProgressHook, run_level
from benchmarks.loadgen.workload import Workload, request_lengths

CONNECT_TIMEOUT_S = 10.0


class EndpointError(Exception):
    """The server cannot be benchmarked (no model list, no such model): nothing was sent."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    base_url: str  # the server's root: /v1/completions is appended
    bearer_token: str = ""  # sent, never logged nor returned
    model: str = ""  # empty: the first model the server lists

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.bearer_token}"} if self.bearer_token else {}


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchmarkResult:
    model: str
    served_models: tuple[str, ...]
    max_model_len: int | None
    prompts_exact: bool  # the server's tokenizer confirmed the prompt lengths
    levels: tuple[LevelResult, ...]

    @property
    def outcome(self) -> Outcome:
        """Return how the benchmark ended: its first level that did not complete decides."""
        return next(
            (lv.outcome for lv in self.levels if lv.outcome != Outcome.COMPLETED),
            Outcome.COMPLETED,
        )


def make_client(
    endpoint: Endpoint,
    *,
    timeout_s: float,
    tls: ssl.SSLContext,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """Return a client with one keep-alive connection (no redirects followed).

    Every client shares `tls`: loading the CA bundle took 130 ms of CPU per client.
    """
    return httpx.AsyncClient(
        verify=tls,
        base_url=endpoint.base_url.rstrip("/"),
        headers=endpoint.headers(),
        timeout=httpx.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S),
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        follow_redirects=False,
        transport=transport,
    )


async def served_models(client: httpx.AsyncClient) -> tuple[list[str], int | None]:
    """Return the model ids `/v1/models` lists and the first one's max_model_len."""
    try:
        response = await client.get("/v1/models")
    except httpx.TransportError as exc:
        raise EndpointError(f"/v1/models: {type(exc).__name__}: {exc}") from exc
    if response.status_code != 200:
        raise EndpointError(f"/v1/models answered HTTP {response.status_code}")
    try:
        data = response.json()["data"]
        ids = [str(m["id"]) for m in data]
    except (ValueError, KeyError, TypeError) as exc:
        raise EndpointError("/v1/models did not return an OpenAI model list") from exc
    if not ids:
        raise EndpointError("/v1/models lists no model")
    length = data[0].get("max_model_len")
    return ids, int(length) if isinstance(length, int) else None


async def token_counter(client: httpx.AsyncClient, model: str) -> TokenCounter | None:
    """Return a counter on the server's `/tokenize` (vLLM's), or None when it has none."""

    async def count(text: str) -> int:
        response = await client.post("/tokenize", json={"model": model, "prompt": text})
        response.raise_for_status()
        return int(response.json()["count"])

    try:
        await count("Hello")
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return None
    return count


async def run_benchmark(
    endpoint: Endpoint,
    levels: Sequence[Workload],
    *,
    hook: ProgressHook | None = None,
    max_duration_s: float | None = None,
    progress_interval_s: float = 1.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> BenchmarkResult:
    """Run every level in order (a sweep) and return their results; stop at the first that
    is cancelled, broken off or out of time."""
    deadline = time.monotonic() + max_duration_s if max_duration_s else None
    timeout = max((w.request_timeout_s for w in levels), default=600.0)
    tls = httpx.create_ssl_context()
    pool = ClientPool(
        lambda: make_client(endpoint, timeout_s=timeout, tls=tls, transport=transport), None
    )
    async with make_client(endpoint, timeout_s=timeout, tls=tls, transport=transport) as client:
        ids, max_len = await served_models(client)
        model = endpoint.model or ids[0]
        if model not in ids:
            raise EndpointError(f"the server does not serve {model!r} (it serves {ids})")
        counter = await token_counter(client, model)
        results: list[LevelResult] = []
        exact = True
        try:
            for index, workload in enumerate(levels):
                lengths = request_lengths(workload, max_input=max_len)
                prompts = await build_prompts(
                    [n for n, _ in lengths],
                    shared_prefix_fraction=workload.shared_prefix_fraction,
                    count=counter,
                    seed=workload.seed,
                )
                exact = exact and prompts.exact
                requests = [
                    CompletionRequest(index=i, model=model, prompt=text, prompt_tokens=n_in,
                                      output_tokens=n_out, ignore_eos=workload.ignore_eos)
                    for i, (text, (n_in, n_out)) in enumerate(zip(prompts.prompts, lengths,
                                                                  strict=True))
                ]  # fmt: skip
                level = await run_level(
                    pool,
                    workload,
                    requests,
                    hook=hook,
                    deadline=deadline,
                    progress_interval_s=progress_interval_s,
                    level=index,
                    levels=len(levels),
                )
                results.append(level)
                if level.outcome != Outcome.COMPLETED:
                    break
        finally:
            await pool.aclose()
    return BenchmarkResult(
        model=model,
        served_models=tuple(ids),
        max_model_len=max_len,
        prompts_exact=exact,
        levels=tuple(results),
    )
