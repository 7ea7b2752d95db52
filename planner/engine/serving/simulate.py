"""A discrete-event simulation of vLLM V1's scheduler, one engine step at a time.

Each step the scheduler serves running requests first (one decode token each, or the next chunk
of an unfinished prefill), then admits waiting requests FCFS while the token budget
(max_num_batched_tokens), the sequence limit (max_num_seqs) and free KV blocks allow. A decode
that finds no free block preempts the most recently admitted request, which loses its KV and is
recomputed later (vLLM V1's recompute preemption). V0's default scheduler (ctx.prefill_first)
instead runs a step of whole waiting prompts whenever one can start, and the decodes only when
none can. The first token is sampled in the step that finishes a prompt. Stretches where every
running request only decodes and nothing can change the batch are advanced in one jump, so a few
hundred requests cost milliseconds.

A closed-loop client sends its next request only once the last token of the previous one has
come back through the API server, and that request goes through the API server again before the
scheduler sees it: it reaches the engine one request overhead (the per-request API, tokenizer
and detokenizer time TTFT already carries) after the previous one finished. Meanwhile the engine
has started its next step, so the newcomer waits for that step to end. Behind a long prefill
step, the replacements of a whole wave of finished requests pile up and are prefilled together
again: the wave structure a closed loop of long outputs shows.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from planner.engine.serving.context import ServingContext
from planner.engine.serving.frontend import ApiServer
from planner.engine.serving.sim_bound import MAX_STEPS, blocks_for
from planner.engine.serving.step import attention_pairs, step_ms, visible_context


class Request:
    """One request's progress through the engine (times in ms)."""

    __slots__ = (
        "arrival_ms",
        "blocks",
        "cached",
        "computed",
        "finish_ms",
        "first_token_ms",
        "generated",
        "input_tokens",
        "output_tokens",
        "prompt",
    )

    def __init__(self, arrival_ms: float, input_tokens: int, output_tokens: int, cached: int):
        self.arrival_ms = arrival_ms
        self.input_tokens = input_tokens
        self.output_tokens = max(1, output_tokens)
        self.cached = min(cached, max(input_tokens - 1, 0))
        self.prompt = input_tokens  # grows by the generated tokens after a preemption
        self.computed = 0
        self.generated = 0
        self.blocks = 0
        self.first_token_ms = -1.0
        self.finish_ms = -1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Finished:
    """The measured timeline of one request (ms), as a benchmark client sees it."""

    ttft_ms: float
    tpot_ms: float
    e2e_ms: float
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SimResult:
    finished: tuple[Finished, ...]
    duration_ms: float
    steps: int
    preemptions: int
    peak_running: int


def simulate(
    ctx: ServingContext,
    arrivals: list[tuple[float, int, int, int]],
    *,
    closed_concurrency: int | None = None,
    max_steps: int = MAX_STEPS,
) -> SimResult:
    """Run `arrivals` (arrival ms, input, output, cached prompt tokens) through one replica.

    With `closed_concurrency` the arrival times are ignored: that many requests start at 0 and
    each completion sends the next one (a benchmark client's --max-concurrency), which reaches
    the scheduler one request overhead later. The run stops after `max_steps` engine steps
    (simulation_bound); requests not finished by then are left out of the result.
    """
    return _Scheduler(ctx, arrivals, closed_concurrency).run(max_steps)


class _Batch:
    """What one engine step schedules: (request, tokens) and the work the step times."""

    __slots__ = ("budget", "decode", "decode_kv", "kv_read", "pairs", "plan", "prefill")

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.decode = 0
        self.prefill = 0
        self.kv_read = 0.0
        self.decode_kv = 0.0
        self.pairs = 0.0
        self.plan: list[tuple[Request, int]] = []


class _Scheduler:
    """One replica's scheduler and its clients: the state of the simulation and its steps."""

    def __init__(
        self,
        ctx: ServingContext,
        arrivals: list[tuple[float, int, int, int]],
        closed_concurrency: int | None,
    ) -> None:
        self.ctx = ctx
        self.closed_concurrency = closed_concurrency
        # Requests on their way to the scheduler, in arrival order (ms, input, output, cached).
        self.inbound: deque[tuple[float, int, int, int]] = deque()
        # A closed loop's prompts not sent yet.
        self.unsent: deque[tuple[float, int, int, int]] = deque()
        if closed_concurrency is None:
            self.inbound.extend(sorted(arrivals, key=lambda x: x[0]))
        else:
            self.unsent.extend(arrivals)
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.done: list[Finished] = []
        self.free_blocks = ctx.kv_blocks
        self.server = ApiServer(ctx)  # the API server in front (serving/frontend.py)
        self.now = 0.0
        self.in_flight = 0
        self.steps = self.preemptions = self.peak = 0
        self.prefilling = 0  # running requests whose prompt is not fully computed yet
        self.round_trip = ctx.request_overhead_ms
        if closed_concurrency is not None:
            self.release(closed_concurrency, 0.0)

    def run(self, max_steps: int) -> SimResult:
        total = len(self.inbound) + len(self.unsent)
        while len(self.done) < total and self.steps < max_steps:
            self.admit_arrivals()
            if not self.running and not self.waiting:
                if not self.inbound:
                    break
                self.now = max(self.now, self.server.next_admission_ms(self.inbound[0][0]))
                continue
            if self.decode_jump():
                continue
            self.step()
        return SimResult(
            finished=tuple(self.done),
            duration_ms=max((self.now, 1e-9)),
            steps=self.steps,
            preemptions=self.preemptions,
            peak_running=self.peak,
        )

    def release(self, n: int, delay_ms: float) -> None:
        """Send a closed loop's next `n` prompts, arriving `delay_ms` from now."""
        if self.closed_concurrency is None:
            return
        for _ in range(n):
            if not self.unsent or self.in_flight >= self.closed_concurrency:
                return
            _, i, o, c = self.unsent.popleft()
            self.inbound.append((self.now + delay_ms, i, o, c))
            self.in_flight += 1

    def finish(self, r: Request) -> None:
        """Record a finished request's timeline and free its KV blocks."""
        ctx = self.ctx
        r.finish_ms = self.now
        self.free_blocks += r.blocks
        r.blocks = 0
        self.in_flight -= 1
        ttft = r.first_token_ms - r.arrival_ms + ctx.request_overhead_ms
        e2e = r.finish_ms - r.arrival_ms + ctx.request_overhead_ms
        decode_ms = r.finish_ms - r.first_token_ms
        tpot = decode_ms / (r.output_tokens - 1) if r.output_tokens > 1 else 0.0
        self.done.append(
            Finished(
                ttft_ms=ttft,
                tpot_ms=tpot,
                e2e_ms=e2e,
                input_tokens=r.input_tokens,
                output_tokens=r.output_tokens,
            )
        )

    def admit_arrivals(self) -> None:
        """Move the requests that have reached the scheduler to the waiting queue."""
        inbound, server = self.inbound, self.server
        while inbound and server.next_admission_ms(inbound[0][0]) <= self.now:
            a, i, o, c = inbound.popleft()
            server.admit(a, i)
            self.waiting.append(Request(a, i, o, c))

    def decode_jump(self) -> bool:
        """Jump through a pure-decode stretch nothing can interrupt; False if there is none."""
        ctx, running, waiting = self.ctx, self.running, self.waiting
        can_admit = (
            bool(waiting)
            and len(running) < ctx.max_num_seqs
            and _admissible(ctx, waiting[0], self.free_blocks)
        )
        if not running or self.prefilling or can_admit:
            return False
        k = _jump(ctx, running, self.free_blocks, self.now, self.inbound)
        if k <= 1:
            return False
        n = len(running)
        ctx_sum = sum(visible_context(ctx, r.prompt + r.generated) for r in running)
        mid = ctx_sum + n * (k - 1) / 2
        dt = step_ms(
            ctx,
            decode_seqs=n,
            prefill_tokens=0,
            kv_read_tokens=mid,
            attn_pairs=mid,
            running_seqs=n,
        )
        self.now = self.server.stream(self.now, k * dt, k * n)
        self.steps += k
        for r in running:
            r.generated += k
            new_blocks = blocks_for(ctx, r.prompt + r.generated)
            self.free_blocks -= new_blocks - r.blocks
            r.blocks = new_blocks
        still = []
        for r in running:
            if r.generated >= r.output_tokens:
                self.finish(r)
            else:
                still.append(r)
        ended = len(running) - len(still)
        self.running = still
        self.release(ended, self.round_trip)
        return True

    def step(self) -> None:
        """One ordinary engine step: running requests first, then waiting ones, then time it."""
        batch = _Batch(self.ctx.max_num_batched_tokens)
        if self.ctx.prefill_first:
            # V0 without chunked prefill: whole prompts when any can start, else the decodes.
            self.schedule_prompts(batch)
            if not batch.plan:
                self.schedule_running(batch)
        else:
            self.schedule_running(batch)
            self.schedule_waiting(batch)
        if not batch.plan:
            self.drop_unfittable()
            return
        self.peak = max(self.peak, len(self.running))
        dt = step_ms(
            self.ctx,
            decode_seqs=batch.decode,
            prefill_tokens=batch.prefill,
            kv_read_tokens=batch.kv_read,
            attn_pairs=batch.pairs,
            # A V0 prompt step does its per-sequence host work for the prompts alone.
            running_seqs=len(batch.plan) if batch.decode == 0 else len(self.running),
            decode_kv_tokens=batch.decode_kv,
        )
        firsts = sum(1 for r, need in batch.plan if r.computed < r.prompt <= r.computed + need)
        self.now = self.server.stream(self.now, dt, batch.decode + firsts)
        self.steps += 1
        self.advance(batch.plan)

    def schedule_running(self, batch: _Batch) -> None:
        """Give each running request its decode token or next prompt chunk, preempting the
        newest ones when KV blocks run out (the hot loop: block counts and windows inlined)."""
        ctx = self.ctx
        running, waiting = self.running, self.waiting
        free_blocks = self.free_blocks
        bs = ctx.block_size
        window = ctx.sliding_window
        budget = batch.budget
        decode = 0
        prefill = 0
        kv_read = 0.0
        decode_kv = 0.0
        pairs = 0.0
        schedule = batch.plan.append
        i = 0
        n_run = len(running)
        while i < n_run and budget > 0:
            r = running[i]
            if r.computed >= r.prompt:
                # A decode that stays inside its last KV block (15 steps in 16): no block to
                # find, nobody to preempt.
                seen = r.prompt + r.generated
                if -(-seen // bs) <= r.blocks:
                    decode += 1
                    if window and seen > window:
                        seen = window
                    kv_read += seen
                    decode_kv += seen
                    pairs += seen
                    schedule((r, 1))
                    budget -= 1
                    i += 1
                    continue
            if r.computed < r.prompt:
                need = min(r.prompt - r.computed, budget)
                want = -(-(r.computed + need) // bs)
            else:
                need = 1
                want = -(-(r.prompt + r.generated) // bs)
            while want - r.blocks > free_blocks and running[-1] is not r:
                victim = running.pop()
                if victim.computed < victim.prompt:
                    self.prefilling -= 1
                free_blocks += victim.blocks
                victim.blocks = 0
                victim.prompt = victim.input_tokens + victim.generated
                victim.computed = 0
                waiting.appendleft(victim)
                self.preemptions += 1
                n_run -= 1
            grow = want - r.blocks
            if grow > free_blocks:
                break
            if grow:
                free_blocks -= grow
                r.blocks = want
            if need == 1 and r.computed >= r.prompt:
                decode += 1
                seen = r.prompt + r.generated
                if window and seen > window:
                    seen = window
                kv_read += seen
                decode_kv += seen
                pairs += seen
            else:
                prefill += need
                pairs += attention_pairs(ctx, r.computed, need)
                kv_read += visible_context(ctx, r.computed)
            schedule((r, need))
            budget -= need
            i += 1
        self.free_blocks = free_blocks
        batch.budget = budget
        batch.decode = decode
        batch.prefill = prefill
        batch.kv_read = kv_read
        batch.decode_kv = decode_kv
        batch.pairs = pairs

    def schedule_waiting(self, batch: _Batch) -> None:
        """Admit waiting requests FCFS while the budget, the sequence limit and KV allow, and
        only when every running request was scheduled."""
        ctx, running, waiting, plan = self.ctx, self.running, self.waiting, batch.plan
        while (
            waiting
            and batch.budget > 0
            and len(running) < ctx.max_num_seqs
            and len(plan) == len(running)
        ):
            r = _with_cached_prefix(waiting[0])
            if not self.admit(batch, r, min(r.prompt - r.computed, batch.budget)):
                break

    def schedule_prompts(self, batch: _Batch) -> None:
        """Admit whole waiting prompts FCFS while the budget, the sequence limit and KV allow
        (V0's prompt-only step); a prompt longer than the budget starts alone, in chunks."""
        while self.waiting and len(self.running) < self.ctx.max_num_seqs:
            r = _with_cached_prefix(self.waiting[0])
            need = r.prompt - r.computed
            if need > batch.budget:
                if batch.plan:
                    break
                need = batch.budget
            if not self.admit(batch, r, need):
                break

    def admit(self, batch: _Batch, r: Request, need: int) -> bool:
        """Move the first waiting request to running with `need` prompt tokens in this step;
        False (nothing changed) when its KV blocks are not free."""
        want = blocks_for(self.ctx, r.computed + need)
        if want - r.blocks > self.free_blocks:
            return False
        self.waiting.popleft()
        self.free_blocks -= want - r.blocks
        r.blocks = want
        self.running.append(r)
        self.prefilling += 1
        batch.prefill += need
        batch.pairs += attention_pairs(self.ctx, r.computed, need)
        batch.kv_read += visible_context(self.ctx, r.computed)
        batch.plan.append((r, need))
        batch.budget -= need
        return True

    def drop_unfittable(self) -> None:
        """Nothing fits (a prompt larger than the whole cache): drop it, as vLLM rejects it."""
        if self.waiting:
            r = self.waiting.popleft()
        else:
            r = self.running.pop()
            if r.computed < r.prompt:
                self.prefilling -= 1
        self.free_blocks += r.blocks
        r.blocks = 0
        r.first_token_ms = self.now
        self.finish(r)
        self.release(1, self.round_trip)

    def advance(self, plan: list[tuple[Request, int]]) -> None:
        """Apply a timed step: prompts computed, tokens generated, finished requests out."""
        ended = 0
        for r, need in plan:
            if r.computed < r.prompt:
                r.computed += need
                if r.computed >= r.prompt:
                    self.prefilling -= 1
                    if r.first_token_ms < 0:
                        r.first_token_ms = self.now
                    r.generated += 1
            else:
                r.generated += 1
            if r.computed >= r.prompt and r.generated >= r.output_tokens:
                self.running.remove(r)
                self.finish(r)
                ended += 1
        self.release(ended, self.round_trip)


def _with_cached_prefix(r: Request) -> Request:
    """Return `r` with its cached prompt prefix counted as computed, before it first starts."""
    if r.computed == 0 and r.cached:
        r.computed = r.cached
    return r


def _admissible(ctx: ServingContext, r: Request, free_blocks: int) -> bool:
    start = r.computed or r.cached
    need = min(r.prompt - start, ctx.max_num_batched_tokens)
    return blocks_for(ctx, start + need) - r.blocks <= free_blocks


def _jump(
    ctx: ServingContext,
    running: list[Request],
    free_blocks: int,
    now: float,
    inbound: deque[tuple[float, int, int, int]],
) -> int:
    """Return how many decode steps can be taken at once before anything changes the batch."""
    k = min(r.output_tokens - r.generated for r in running)
    # KV growth must fit: every block boundary crossed needs a free block.
    growth = 0
    for r in running:
        growth += blocks_for(ctx, r.prompt + r.generated + k) - r.blocks
    if growth > free_blocks:
        return 1
    if inbound:
        n = len(running)
        ctx_sum = sum(visible_context(ctx, r.prompt + r.generated) for r in running)
        dt = step_ms(
            ctx,
            decode_seqs=n,
            prefill_tokens=0,
            kv_read_tokens=ctx_sum,
            attn_pairs=ctx_sum,
            running_seqs=n,
        )
        if dt > 0:
            k = min(k, max(1, math.ceil((inbound[0][0] - now) / dt)))
    return max(k, 1)
