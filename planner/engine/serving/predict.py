"""predict(context, workload) -> Prediction: latency percentiles, throughput, saturation, SLOs.

The simulation (simulate.py) gives the distributions; `steady_state` is its closed-form mean
for ranking many candidates and for scanning concurrency levels cheaply.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from planner.engine.messages import Message
from planner.engine.serving.backend import StepBackend
from planner.engine.serving.bands import Band
from planner.engine.serving.context import ServingContext
from planner.engine.serving.sim_bound import simulation_bound
from planner.engine.serving.simulate import SimResult, simulate
from planner.engine.serving.step import attention_pairs, decode_step_ms, step_ms
from planner.engine.spec import Workload

SEED = 20_241_201
SCAN_LEVELS = (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048)


@dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """What a deployment delivers under a workload (all replicas together)."""

    method: str  # simulation | steady-state
    arrival: str
    concurrency: float  # requests in flight (closed loop) or offered (rate × E2E)
    requests_simulated: int
    ttft_mean_ms: float
    tpot_mean_ms: float
    ttft_p50_ms: float
    ttft_p95_ms: float
    tpot_p50_ms: float
    tpot_p95_ms: float
    itl_p50_ms: float
    itl_p95_ms: float
    e2e_p50_ms: float
    e2e_p95_ms: float
    output_tok_s: float
    total_tok_s: float
    requests_per_s: float
    preempted_requests: int
    # Uncertainty: the range the calibration residuals put around the p50 values.
    ttft_p50_low_ms: float
    ttft_p50_high_ms: float
    tpot_p50_low_ms: float
    tpot_p50_high_ms: float
    output_low_tok_s: float
    output_high_tok_s: float
    saturation_concurrency: float | None = None
    slo_ttft_p95_ms: float | None = None
    slo_itl_p95_ms: float | None = None
    slo_met: bool | None = None
    max_concurrency_meeting_slo: int | None = None
    # What timed the steps (the roofline unless measured kernel tables were asked for and
    # cover the layout) and, when the tables were asked for, what they are or why not.
    step_backend: StepBackend = StepBackend.ROOFLINE
    step_backend_note: str = ""
    # The same bands as (low, high) around the other p50 outputs (E2E takes the TPOT band:
    # decode dominates it), and which calibration runs, or none, the bands come from.
    e2e_p50_range_ms: tuple[float, float] = (0.0, 0.0)
    total_range_tok_s: tuple[float, float] = (0.0, 0.0)
    requests_range_per_s: tuple[float, float] = (0.0, 0.0)
    band_basis: str = ""
    # The same, typed for the pages: calibration runs behind the bands (0: none, the wide
    # fallback) and the regime (GPU generation/dense or MoE/dtype/load/backend) looked up.
    band_runs: int = 0
    band_regime: str = ""
    # When measured kernel tables were asked for: why they timed none or only some of the
    # steps (the roofline timed the others); None when they timed every step, or not asked.
    step_backend_notice: Message | None = None


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _length(rng: random.Random, mean: int, sd: float) -> int:
    if sd <= 0:
        return max(1, mean)
    return max(1, min(int(round(rng.gauss(mean, sd))), 10 * mean + 1))


def _long_length(mean: int, sd: float) -> float:
    """Return a length from above: one deviation over the mean, within `_length`'s clamp."""
    return min(mean + max(sd, 0.0), 10 * mean + 1)


def _per_replica_load(wl: Workload, replicas: int) -> tuple[int | None, float | None, int]:
    """Return (closed concurrency, rate per s, requests) one replica of `replicas` receives."""
    r = max(replicas, 1)
    if wl.arrival == "burst":
        n = math.ceil((wl.burst_size or wl.concurrency) / r)
        return None, None, wl.num_requests or n
    if wl.arrival == "poisson":
        rate = (wl.request_rate_per_s or 1.0) / r
        return None, rate, wl.num_requests or 300
    c = max(1, math.ceil(wl.concurrency / r))
    return c, None, wl.num_requests or min(max(4 * c, 32), 1500)


def _arrivals(
    ctx: ServingContext, wl: Workload, rate: float | None, n: int
) -> list[tuple[float, int, int, int]]:
    rng = random.Random(SEED)
    out = []
    t = 0.0
    for k in range(n):
        i = _length(rng, wl.avg_input_tokens, wl.input_tokens_sd)
        o = _length(rng, wl.avg_output_tokens, wl.output_tokens_sd)
        cached = 0
        if k < wl.cached_requests:
            cached = i // ctx.block_size * ctx.block_size
        elif k and wl.shared_prefix_fraction > 0:
            cached = int(i * wl.shared_prefix_fraction) // ctx.block_size * ctx.block_size
        if rate:
            t += rng.expovariate(rate) * 1e3
        out.append((t if rate else 0.0, i, o, cached))
    if rate and t > 0:
        # One seeded draw of n gaps spans n/rate ± √n/rate: ±9 % over 120 requests, which moved
        # a short run's throughput by as much. Stretching the draw to its expected span keeps
        # its bunching and predicts the expected run, not one sample of it.
        stretch = n / rate * 1e3 / t
        out = [(at * stretch, i, o, cached) for at, i, o, cached in out]
    return out


def requests_in_load(wl: Workload, replicas: int) -> int:
    """Return the requests the simulation of one replica's load asks for (before its cap).

    A prediction that finished fewer (`requests_simulated`) was capped or cut short: its
    percentiles come from the first requests only.
    """
    return _per_replica_load(wl, replicas)[2]


def run(ctx: ServingContext, wl: Workload, replicas: int = 1) -> SimResult:
    """Simulate the load one replica of `replicas` receives, within the simulation's budget."""
    closed, rate, n = _per_replica_load(wl, replicas)
    bound = simulation_bound(
        ctx,
        requests=n,
        input_tokens=_long_length(wl.avg_input_tokens, wl.input_tokens_sd),
        output_tokens=_long_length(wl.avg_output_tokens, wl.output_tokens_sd),
        closed_concurrency=closed,
    )
    arrivals = _arrivals(ctx, wl, rate, bound.requests)
    return simulate(ctx, arrivals, closed_concurrency=closed, max_steps=bound.max_steps)


def predict(
    ctx: ServingContext,
    wl: Workload,
    *,
    replicas: int = 1,
    balancer_efficiency: float = 1.0,
    band: Band | None = None,
    scan: bool = True,
) -> Prediction:
    """Return the predicted serving figures of `replicas` replicas of `ctx` under `wl`.

    `band` holds the relative uncertainties (TTFT, TPOT, throughput) from the calibration
    residuals (serving/bands.py). With `scan`, the saturation point and the highest closed-loop
    concurrency that meets the SLOs are found from the steady-state model.
    """
    sim = run(ctx, wl, replicas)
    fin = sim.finished
    ttft = [f.ttft_ms for f in fin]
    tpot = [f.tpot_ms for f in fin if f.output_tokens > 1]
    e2e = [f.e2e_ms for f in fin]
    seconds = sim.duration_ms / 1e3
    scale = replicas * (balancer_efficiency if replicas > 1 else 1.0)
    out_tokens = sum(f.output_tokens for f in fin)
    all_tokens = out_tokens + sum(f.input_tokens for f in fin)
    out_tok_s = out_tokens / seconds * scale if seconds > 0 else 0.0
    tpot_p50 = _percentile(tpot, 0.5)
    ttft_p50 = _percentile(ttft, 0.5)
    band = band or Band(ttft=0.0, tpot=0.0, tok_s=0.0, basis="")
    ttft_band = _band(ttft_p50, band.ttft)
    tpot_band = _band(tpot_p50, band.tpot)
    output_band = _band(out_tok_s, band.tok_s)
    e2e_p50 = _percentile(e2e, 0.5)
    total_tok_s = all_tokens / seconds * scale if seconds > 0 else 0.0
    req_s = len(fin) / seconds * scale if seconds > 0 else 0.0
    closed, _, _ = _per_replica_load(wl, replicas)
    concurrency = float(wl.concurrency) if closed else _offered(fin, seconds, replicas)
    pred = Prediction(
        method="simulation",
        arrival=wl.arrival,
        concurrency=concurrency,
        requests_simulated=len(fin),
        ttft_mean_ms=sum(ttft) / len(ttft) if ttft else 0.0,
        tpot_mean_ms=sum(tpot) / len(tpot) if tpot else 0.0,
        ttft_p50_ms=ttft_p50,
        ttft_p95_ms=_percentile(ttft, 0.95),
        tpot_p50_ms=tpot_p50,
        tpot_p95_ms=_percentile(tpot, 0.95),
        itl_p50_ms=tpot_p50,
        itl_p95_ms=_percentile(tpot, 0.95),
        e2e_p50_ms=e2e_p50,
        e2e_p95_ms=_percentile(e2e, 0.95),
        output_tok_s=out_tok_s,
        total_tok_s=total_tok_s,
        requests_per_s=req_s,
        preempted_requests=sim.preemptions,
        ttft_p50_low_ms=ttft_band[0],
        ttft_p50_high_ms=ttft_band[1],
        tpot_p50_low_ms=tpot_band[0],
        tpot_p50_high_ms=tpot_band[1],
        output_low_tok_s=output_band[0],
        output_high_tok_s=output_band[1],
        e2e_p50_range_ms=_band(e2e_p50, band.tpot),
        total_range_tok_s=_band(total_tok_s, band.tok_s),
        requests_range_per_s=_band(req_s, band.tok_s),
        slo_ttft_p95_ms=wl.ttft_slo_ms,
        slo_itl_p95_ms=wl.itl_slo_ms,
        step_backend=ctx.backend.used,
        step_backend_note=ctx.backend.note,
        band_basis=band.basis,
        band_runs=band.runs,
        band_regime=band.regime,
    )
    if not scan:
        return pred
    return _with_scan(pred, ctx, wl, replicas)


def _band(value: float, share: float) -> tuple[float, float]:
    """Return (low, high): `value` less and more its relative uncertainty `share`."""
    return value * (1 - share), value * (1 + share)


def _offered(fin: tuple, seconds: float, replicas: int) -> float:
    """Return the mean requests in flight (Little's law: rate × mean E2E)."""
    if not fin or seconds <= 0:
        return 0.0
    mean_e2e_s = sum(f.e2e_ms for f in fin) / len(fin) / 1e3
    return len(fin) / seconds * mean_e2e_s * replicas


def _with_scan(pred: Prediction, ctx: ServingContext, wl: Workload, replicas: int) -> Prediction:
    """Return `pred` with the saturation point and the SLO verdicts.

    The verdict at the workload is the simulation's; the scan over other concurrencies uses the
    steady state, kept consistent with that verdict (a met SLO is met at least up to the
    workload's concurrency, a missed one only below it).
    """
    curve = [(c, steady_state(ctx, wl, c * replicas, replicas=replicas)) for c in SCAN_LEVELS]
    curve = [(c, s) for c, s in curve if c <= 4 * max(ctx.max_num_seqs, 1)]
    sat = saturation(curve)
    met = None
    best = None
    if wl.ttft_slo_ms is not None or wl.itl_slo_ms is not None:
        met = _meets(pred.ttft_p95_ms, pred.itl_p95_ms, wl)
        here = pred.concurrency
        for c, s in curve:
            total = c * replicas
            ok = _meets(s.ttft_p95_ms, s.tpot_ms, wl)
            if met and total <= here:
                ok = True
            elif not met and total >= here:
                ok = False
            if not ok:
                break
            best = total
        if met:
            best = max(best or 0, int(here)) or None
    return replace(
        pred,
        saturation_concurrency=float(sat * replicas) if sat else None,
        slo_met=met,
        max_concurrency_meeting_slo=best,
    )


def _meets(ttft_p95: float, itl_p95: float, wl: Workload) -> bool:
    ok = True
    if wl.ttft_slo_ms is not None:
        ok = ok and ttft_p95 <= wl.ttft_slo_ms
    if wl.itl_slo_ms is not None:
        ok = ok and itl_p95 <= wl.itl_slo_ms
    return ok


@dataclass(frozen=True, slots=True, kw_only=True)
class SteadyState:
    """Closed-loop means at one concurrency (per deployment)."""

    running: float
    ttft_ms: float
    ttft_p95_ms: float
    tpot_ms: float
    e2e_ms: float
    output_tok_s: float
    decode_step_ms: float  # a decode-only step of the running batch at the mean context


def steady_state(
    ctx: ServingContext, wl: Workload, concurrency: float, *, replicas: int = 1
) -> SteadyState:
    """Return the closed-loop steady state of `concurrency` requests over `replicas` replicas.

    Per replica, B = min(C, max_num_seqs, KV capacity) requests run; each needs one prompt
    (in chunks of the budget the decodes leave) and out − 1 decode steps, so a share of the steps
    carries a prefill chunk and every running decode pays for it. Requests beyond B queue for a
    whole request cycle each B departures.
    """
    c = max(concurrency / max(replicas, 1), 1e-9)
    n_in = max(wl.avg_input_tokens * (1 - wl.shared_prefix_fraction), 1.0)
    n_out = max(wl.avg_output_tokens, 1)
    mid_ctx = wl.avg_input_tokens + n_out / 2
    kv_limit = ctx.kv_tokens / max(mid_ctx, 1)
    b = max(min(c, float(ctx.max_num_seqs), kv_limit), 1e-9)
    room = max(ctx.max_num_batched_tokens - b, 1.0)
    chunks = max(1, math.ceil(n_in / room))
    chunk = n_in / chunks
    t_dec = decode_step_ms(ctx, b, mid_ctx)
    t_mix = step_ms(
        ctx,
        decode_seqs=max(b - 1, 0),
        prefill_tokens=chunk,
        kv_read_tokens=max(b - 1, 0) * mid_ctx + wl.avg_input_tokens / 2,
        attn_pairs=max(b - 1, 0) * mid_ctx + attention_pairs(ctx, 0, chunk) * 1.0,
        running_seqs=b,
        decode_kv_tokens=max(b - 1, 0) * mid_ctx,
    )
    # Share of steps that carry a prefill chunk: b prompts of `chunks` steps every n_out steps.
    mixed = min(1.0, b * chunks / n_out)
    tpot = (1 - mixed) * t_dec + mixed * t_mix
    if mixed >= 1.0:
        # Prefill-bound: several chunks share a step; the step grows with the extra tokens.
        extra = b * n_in / n_out - chunk
        tpot = step_ms(
            ctx,
            decode_seqs=b,
            prefill_tokens=chunk + max(extra, 0.0),
            kv_read_tokens=b * mid_ctx,
            attn_pairs=b * mid_ctx + attention_pairs(ctx, 0, chunk) * b * chunks / n_out,
            running_seqs=b,
            decode_kv_tokens=b * mid_ctx,
        )
    service_ttft = chunks * t_mix + ctx.request_overhead_ms
    cycle = service_ttft + (n_out - 1) * tpot
    rate = b / cycle  # requests per ms per replica
    queue = max(c - b, 0.0) / rate if rate > 0 else 0.0
    # The first wave of a closed loop starts together: its prompts share the budget.
    wave = math.ceil(b * n_in / ctx.max_num_batched_tokens) * t_mix
    ttft = service_ttft + queue
    first_wave_last = _wave_ttft(ctx, b, n_in, t_dec, last=True)
    if wl.output_tokens_sd <= 0:
        # Equal outputs keep a closed loop's waves together (simulate.py).
        ttft = max(ttft, _wave_ttft(ctx, b, n_in, t_dec) + queue)
    ttft_p95 = max(ttft, service_ttft + wave, first_wave_last) + queue * 0.5
    out = b * n_out / cycle * 1e3 * replicas
    return SteadyState(
        running=b * replicas,
        ttft_ms=ttft,
        ttft_p95_ms=ttft_p95,
        tpot_ms=tpot,
        e2e_ms=ttft + (n_out - 1) * tpot,
        output_tok_s=out,
        decode_step_ms=t_dec,
    )


def _wave_ttft(
    ctx: ServingContext, b: float, n_in: float, t_dec: float, *, last: bool = False
) -> float:
    """Return the mean TTFT of a closed loop's waves of `b` prompts of `n_in` tokens.

    A wave of w prompts that arrive together fills steps of max_num_batched_tokens; the k-th
    prompt's first token comes with step ⌈k × n_in / budget⌉, on average (w + 1)/2 × n_in /
    budget + ½ steps (`last`: the last one, ⌈w × n_in / budget⌉). The prompts prefilled in one
    step finish in one step, and their replacements arrive together one request overhead later.
    The whole wave of b holds when its last group finishes (as many decode steps after the first
    as it started) before the first group's replacements have been prefilled; otherwise each
    group of ⌊budget / n_in⌋ prompts stays a wave of its own. The first wave (everyone starts at
    once) is always whole.
    """
    budget = ctx.max_num_batched_tokens
    share = n_in / budget
    tokens = min(budget, b * n_in)
    prompts = tokens / n_in
    t_full = step_ms(
        ctx,
        decode_seqs=0,
        prefill_tokens=tokens,
        kv_read_tokens=0,
        attn_pairs=attention_pairs(ctx, 0, min(n_in, budget)) * max(prompts, 1.0),
        running_seqs=max(prompts, 1.0),
    )
    if last:
        return math.ceil(b * share) * t_full + ctx.request_overhead_ms
    w = b
    if (math.ceil(b * share) - 1) * t_dec > ctx.request_overhead_ms + t_full:
        w = min(b, max(1.0, math.floor(1 / share)))
    steps = max(math.ceil(share), share * (w + 1) / 2 + 0.5) if w > 1 else math.ceil(share)
    return steps * t_full + ctx.request_overhead_ms


def saturation(curve: list[tuple[int, SteadyState]]) -> int | None:
    """Return the concurrency beyond which E2E latency grows faster than throughput."""
    for (c0, s0), (_, s1) in zip(curve, curve[1:], strict=False):
        if s0.output_tok_s <= 0 or s0.e2e_ms <= 0:
            continue
        lat_growth = s1.e2e_ms / s0.e2e_ms
        tput_growth = s1.output_tok_s / s0.output_tok_s
        if lat_growth > tput_growth:
            return c0
    return curve[-1][0] if curve else None
