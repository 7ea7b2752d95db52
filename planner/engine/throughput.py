"""Latency and throughput of a layout for ranking: the serving model's closed-loop steady state.

Step times come from planner/engine/serving (roofline per engine step, chunked prefill riding
along with decodes, all-reduce latency + bandwidth per call, PP hops and bubbles). The decode
step and its communication are also reported alone, so the page can explain what the network
costs (DOMAIN.md §2, seed S2a).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.architecture import Architecture
from planner.engine.assumptions import Assumptions
from planner.engine.memory import MemoryResult
from planner.engine.network import Link
from planner.engine.serving import ServingContext, build_context, steady_state
from planner.engine.serving.context import pp_hop_ms, tp_comm_ms
from planner.engine.serving.step import decode_step_ms, stage_ms
from planner.engine.spec import GpuSpec, Workload


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
    arch: Architecture,
    gpu: GpuSpec,
    mem: MemoryResult,
    workload: Workload,
    *,
    tp: int,
    pp: int,
    replicas: int,
    tp_link: Link,
    pp_link: Link,
    dtype: str,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    a: Assumptions,
    overlap: float,
) -> Perf:
    """Return latency and throughput of a layout at the workload and at saturation."""
    ctx = build_context(
        arch,
        gpu,
        mem,
        tp=tp,
        pp=pp,
        tp_link=tp_link,
        pp_link=pp_link,
        dtype=dtype,
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        a=a,
        overlap=overlap,
    )
    load = workload.concurrency
    if workload.arrival == "burst":
        load = workload.burst_size or load
    state = steady_state(ctx, workload, load, replicas=replicas)
    batch = state.running / max(replicas, 1)
    context = workload.avg_input_tokens + workload.avg_output_tokens / 2
    micro = batch / pp
    stage, comm = stage_ms(
        ctx,
        decode_seqs=micro,
        prefill_tokens=0,
        kv_read_tokens=micro * context,
        attn_pairs=micro * context,
    )
    decode_step = decode_step_ms(ctx, batch, context)
    n_in = workload.avg_input_tokens
    prefill_comm = tp_comm_ms(ctx, n_in) * pp + (pp - 1) * pp_hop_ms(ctx, n_in)
    cap_load = float(max_num_seqs) * replicas
    cap = steady_state(ctx, workload, cap_load, replicas=replicas)
    balance = a.balancer_efficiency if replicas > 1 else 1.0
    ratio = (n_in + workload.avg_output_tokens) / workload.avg_output_tokens
    return Perf(
        batch_per_replica=batch,
        decode_step_ms=decode_step,
        decode_compute_ms=(stage - comm * (1 - overlap)) * pp,
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
