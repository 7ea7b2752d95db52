"""Drive one benchmark level against an OpenAI-compatible server, on one asyncio loop.

Arrival as `vllm bench serve` does it: every request is released at its send time (all at once,
or Poisson gaps), then waits for a free slot when the in-flight cap is reached. A hook is called
off the loop every `progress_interval_s` with the progress and may stop the level; so may the
deadline; a server that fails BREAK_OFF_AFTER requests in a row (refused, reset, timed out, 5xx)
breaks the level off. Requests in flight at a stop are counted as failed, never dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from benchmarks.loadgen.client import CompletionRequest, stream_completion
from benchmarks.loadgen.connections import ClientPool
from benchmarks.loadgen.metrics import summarize
from benchmarks.loadgen.results import LevelResult, Outcome, RequestRecord
from benchmarks.loadgen.workload import Workload, send_times

BREAK_OFF_AFTER = 8
LIVE_WINDOW = 200  # completions behind the live TTFT/TPOT medians
MAX_ERRORS_KEPT = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """What a level has done so far (handed to the hook)."""

    level: int  # 0-based index in the sweep
    levels: int
    total: int
    done: int  # answered, successfully or not
    failed: int
    in_flight: int
    elapsed_s: float
    eta_s: float | None
    ttft_median_ms: float | None
    tpot_median_ms: float | None


ProgressHook = Callable[[Progress], bool]  # returns True to stop


@dataclass(slots=True)
class _State:
    records: list[RequestRecord]
    recent: deque[RequestRecord]
    tasks: set[asyncio.Task[None]]
    in_flight: int = 0
    failures_in_a_row: int = 0
    stop: Outcome | None = None


def _progress(state: _State, total: int, start: float, level: int, levels: int) -> Progress:
    done = len(state.records)
    elapsed = time.perf_counter() - start
    recent = [r for r in state.recent if r.success]
    tpots = [t for r in recent if (t := r.tpot_s) is not None]
    return Progress(
        level=level,
        levels=levels,
        total=total,
        done=done,
        failed=sum(1 for r in state.records if not r.success),
        in_flight=state.in_flight,
        elapsed_s=elapsed,
        eta_s=elapsed / done * (total - done) if done else None,
        ttft_median_ms=statistics.median(r.ttft_s for r in recent) * 1000 if recent else None,
        tpot_median_ms=statistics.median(tpots) * 1000 if tpots else None,
    )


async def _watch(
    state: _State,
    hook: ProgressHook | None,
    report: Callable[[], Progress],
    interval_s: float,
    deadline: float | None,
    wake: asyncio.Event,
) -> None:
    """Call the hook on schedule; stop the level when it asks or the deadline passes."""
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=interval_s)
        if wake.is_set():
            break
        if state.stop is not None:
            continue
        if deadline is not None and time.monotonic() >= deadline:
            state.stop = Outcome.TIMED_OUT
        elif hook is not None and await asyncio.to_thread(hook, report()):
            state.stop = Outcome.CANCELLED
        if state.stop is not None:
            for task in list(state.tasks):
                task.cancel()  # each records itself as stopped in flight
    if hook is not None:  # the level ended: one last report, so the counts are final
        await asyncio.to_thread(hook, report())


async def run_level(
    pool: ClientPool,
    workload: Workload,
    requests: Sequence[CompletionRequest],
    *,
    hook: ProgressHook | None = None,
    deadline: float | None = None,
    progress_interval_s: float = 1.0,
    level: int = 0,
    levels: int = 1,
) -> LevelResult:
    """Send `requests` under the workload's arrival shape and return the level's result."""
    state = _State(records=[], recent=deque(maxlen=LIVE_WINDOW), tasks=set())
    pool.set_limit(workload.in_flight_cap)
    times = send_times(workload)
    start = time.perf_counter()
    wake = asyncio.Event()
    watcher = asyncio.create_task(
        _watch(state, hook,
               lambda: _progress(state, len(requests), start, level, levels),
               progress_interval_s, deadline, wake)
    )  # fmt: skip

    async def one(req: CompletionRequest, client: httpx.AsyncClient) -> None:
        try:
            record, server_failed = await stream_completion(client, req, level_start=start)
        except asyncio.CancelledError:
            # Stopped by a cancel or the deadline: counted as failed, never dropped.
            record, server_failed = _stopped(req, state.stop, start), False
        finally:
            state.in_flight -= 1
            await pool.release(client)
        state.records.append(record)
        state.recent.append(record)
        state.failures_in_a_row = state.failures_in_a_row + 1 if server_failed else 0
        if state.failures_in_a_row >= BREAK_OFF_AFTER and state.stop is None:
            state.stop = Outcome.BROKEN_OFF

    for req, at in zip(requests, times, strict=True):
        delay = start + at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        client = await pool.acquire()  # waits while the cap is reached
        if state.stop is not None:
            await pool.release(client)
            break
        state.in_flight += 1
        task = asyncio.create_task(one(req, client))
        state.tasks.add(task)
        task.add_done_callback(state.tasks.discard)
    while state.tasks:
        await asyncio.wait(set(state.tasks))
    duration = time.perf_counter() - start
    wake.set()
    await watcher
    return _result(workload, state, len(requests), duration)


def _stopped(req: CompletionRequest, why: Outcome | None, start: float) -> RequestRecord:
    return RequestRecord(
        index=req.index,
        start_s=time.perf_counter() - start,
        prompt_tokens=req.prompt_tokens,
        asked_output_tokens=req.output_tokens,
        error=f"stopped in flight ({why})",
    )


def _result(workload: Workload, state: _State, total: int, duration_s: float) -> LevelResult:
    records = sorted(state.records, key=lambda r: r.index)
    errors: list[str] = []
    for r in records:
        if r.error and r.error not in errors and len(errors) < MAX_ERRORS_KEPT:
            errors.append(r.error)
    return LevelResult(
        concurrency=workload.in_flight_cap,
        request_rate_rps=workload.request_rate_rps,
        outcome=state.stop or Outcome.COMPLETED,
        summary=summarize(records, requests=total, duration_s=duration_s, slo=workload.slo),
        records=tuple(records),
        errors=tuple(errors),
    )
