"""Latency and throughput of a layout for ranking: the serving model's closed-loop steady state.

Step times come from planner/engine/serving (roofline per engine step, chunked prefill riding
along with decodes, all-reduce latency + bandwidth per call, PP hops and bubbles). The decode
step and its communication are also reported alone, so the page can explain what the network
costs (DOMAIN.md §2, seed S2a).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.engine.serving import ServingContext, steady_state
from planner.engine.serving.context import pp_hop_ms, tp_comm_ms
from planner.engine.serving.step import stage_ms, visible_context
from planner.engine.spec import Workload


@dataclass(frozen=True, slots=True, kw_only=True)
class Perf:
    batch_per_replica: float
    decode_step_ms: float
    decode_compute_ms: float
    decode_comm_ms: float
    decode_pp_comm_ms: float
    prefill_comm_ms: float
    ttft_ms: float
    itl_ms: float
    output_tok_s: float
    total_tok_s: float
    capacity_output_tok_s: float
    context: ServingContext


def estimate(
    ctx: ServingContext, workload: Workload, *, replicas: int, balancer_efficiency: float
) -> Perf:
    """Return latency and throughput of `replicas` replicas of `ctx` at the workload and at
    saturation."""
    pp = ctx.pp
    load = workload.concurrency
    if workload.arrival == "burst":
        load = workload.burst_size or load
    state = steady_state(ctx, workload, load, replicas=replicas)
    batch = state.running / max(replicas, 1)
    context = workload.avg_input_tokens + workload.avg_output_tokens / 2
    micro = batch / pp
    seen = visible_context(ctx, context)  # what the steady state's decode step reads too
    stage, comm = stage_ms(
        ctx,
        decode_seqs=micro,
        prefill_tokens=0,
        kv_read_tokens=micro * seen,
        attn_pairs=micro * seen,
    )
    n_in = workload.avg_input_tokens
    prefill_comm = tp_comm_ms(ctx, n_in) * pp + (pp - 1) * pp_hop_ms(ctx, n_in)
    cap_load = float(ctx.max_num_seqs) * replicas
    cap = steady_state(ctx, workload, cap_load, replicas=replicas)
    balance = balancer_efficiency if replicas > 1 else 1.0
    ratio = (n_in + workload.avg_output_tokens) / workload.avg_output_tokens
    return Perf(
        batch_per_replica=batch,
        decode_step_ms=state.decode_step_ms,
        decode_compute_ms=(stage - comm * (1 - ctx.overlap)) * pp,
        decode_comm_ms=comm * pp,
        decode_pp_comm_ms=(pp - 1) * pp_hop_ms(ctx, micro),
        prefill_comm_ms=prefill_comm,
        ttft_ms=state.ttft_ms,
        itl_ms=state.tpot_ms,
        output_tok_s=state.output_tok_s,
        total_tok_s=state.output_tok_s * ratio,
        capacity_output_tok_s=cap.output_tok_s * balance,
        context=ctx,
    )
