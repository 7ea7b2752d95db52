"""Roofline throughput and latency: decode bound by HBM reads, prefill by FLOPS, plus communication.

decode stage time = max(bytes read / (HBM × efficiency), FLOPs / (TFLOPS × MFU))
                    + TP all-reduce × (1 − overlap)
With PP the batch is split into pp micro-batches that keep every stage busy.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.architecture import Architecture, parameter_breakdown
from planner.engine.assumptions import Assumptions
from planner.engine.memory import MemoryResult
from planner.engine.network import Link, pp_comm_ms, tp_comm_ms
from planner.engine.spec import GpuSpec, Workload


@dataclass(frozen=True, slots=True, kw_only=True)
class Perf:
    batch_per_replica: float
    decode_step_ms: float
    decode_compute_ms: float
    decode_comm_ms: float
    decode_pp_comm_ms: float
    prefill_ms: float
    prefill_comm_ms: float
    ttft_ms: float
    itl_ms: float
    output_tok_s: float
    total_tok_s: float
    capacity_batch: float
    capacity_output_tok_s: float


def _expert_fraction(arch: Architecture, batch: float) -> float:
    """Return the share of routed experts a decode batch touches (uniform routing)."""
    if not arch.is_moe or arch.num_experts == 0:
        return 1.0
    p = arch.experts_per_token / arch.num_experts
    return float(1.0 - (1.0 - p) ** max(batch, 1.0))


def _weights_read_bytes(arch: Architecture, mem: MemoryResult, batch: float) -> float:
    """Return weight bytes one GPU of the slowest stage reads per decode step."""
    stage = max(mem.stages, key=lambda s: s.weights_bytes)
    if not arch.is_moe:
        return stage.weights_bytes
    b = parameter_breakdown(arch)
    expert_share = (b.experts_per_layer * b.num_moe_layers) / max(b.total, 1)
    frac = _expert_fraction(arch, batch)
    return stage.weights_bytes * (1 - expert_share + expert_share * frac)


def decode_stage_ms(
    arch: Architecture,
    gpu: GpuSpec,
    mem: MemoryResult,
    *,
    batch: float,
    context: float,
    tp: int,
    pp: int,
    tp_link: Link,
    dtype: str,
    a: Assumptions,
    overlap: float,
) -> tuple[float, float, float]:
    """Return (stage time, compute-or-memory time, TP comm time) for one decode step, in ms."""
    stage = max(mem.stages, key=lambda s: s.weights_bytes)
    kv_read = batch * context * stage.kv_bytes_per_token
    t_mem = (_weights_read_bytes(arch, mem, batch) + kv_read) / (
        gpu.hbm_bandwidth_gbs * 1e9 * a.hbm_efficiency
    )
    active = parameter_breakdown(arch).active / (tp * pp)
    t_flops = 2 * active * batch / (_tflops(gpu, dtype, a) * 1e12 * a.decode_mfu)
    compute_ms = max(t_mem, t_flops) * 1e3 + batch * a.decode_per_seq_overhead_ms
    comm = tp_comm_ms(
        hidden=arch.hidden_size, layers=stage.layers, tokens=batch, tp=tp, link=tp_link, a=a
    )
    return compute_ms + comm * (1 - overlap), compute_ms, comm


def _tflops(gpu: GpuSpec, dtype: str, a: Assumptions) -> float:
    if dtype in ("fp8", "int8") and gpu.fp8_support:
        return gpu.bf16_dense_tflops * a.fp8_compute_speedup
    return gpu.bf16_dense_tflops


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
    seq_tokens = workload.avg_input_tokens + workload.avg_output_tokens
    context = workload.avg_input_tokens + workload.avg_output_tokens / 2
    kv_limited = mem.kv_tokens / seq_tokens if seq_tokens else 0.0
    offered = workload.concurrency / replicas
    batch = max(min(offered, float(max_num_seqs), kv_limited), 1e-9)
    cap_batch = max(min(float(max_num_seqs), kv_limited), 1e-9)

    def round_ms(b: float) -> tuple[float, float, float, float]:
        micro = b / pp
        stage, compute, comm = decode_stage_ms(
            arch,
            gpu,
            mem,
            batch=micro,
            context=context,
            tp=tp,
            pp=pp,
            tp_link=tp_link,
            dtype=dtype,
            a=a,
            overlap=overlap,
        )
        pp_ms = pp_comm_ms(hidden=arch.hidden_size, tokens=micro, pp=pp, link=pp_link, a=a)
        eff = a.pp_efficiency if pp > 1 else 1.0
        step = (pp * stage + pp_ms) / eff + a.decode_step_overhead_ms
        return step, compute * pp, comm * pp, pp_ms

    # Prefill of one request: FLOPs over all GPUs of the replica, plus its all-reduces.
    b = parameter_breakdown(arch)
    n_in = workload.avg_input_tokens
    attn_flops = 2.0 * arch.num_layers * n_in * n_in * arch.num_attention_heads * arch.head_dim
    flops = 2.0 * b.active * n_in + attn_flops
    prefill_compute_ms = flops / (tp * _tflops(gpu, dtype, a) * 1e12 * a.prefill_mfu) * 1e3
    chunks = max(1, -(-n_in // max_num_batched_tokens))
    layers_per_stage = max(s.layers for s in mem.stages)
    prefill_comm = tp_comm_ms(
        hidden=arch.hidden_size,
        layers=layers_per_stage * pp,
        tokens=n_in,
        tp=tp,
        link=tp_link,
        a=a,
    )
    prefill_comm += (
        (chunks - 1)
        * layers_per_stage
        * pp
        * a.all_reduces_per_layer
        * (tp_link.latency_us / 1e3 if tp > 1 else 0.0)
    )
    prefill_comm += pp_comm_ms(hidden=arch.hidden_size, tokens=n_in, pp=pp, link=pp_link, a=a)
    prefill_ms = prefill_compute_ms + prefill_comm * (1 - overlap)

    def output_rate(bt: float) -> float:
        step = round_ms(bt)[0]
        out = workload.avg_output_tokens
        seconds = (bt * prefill_ms + out * step) / 1e3
        return bt * out / seconds if seconds > 0 else 0.0

    step, compute, comm, pp_ms = round_ms(batch)
    per_replica = output_rate(batch)
    balance = a.balancer_efficiency if replicas > 1 else 1.0
    output = per_replica * replicas
    ratio = (workload.avg_input_tokens + workload.avg_output_tokens) / workload.avg_output_tokens
    return Perf(
        batch_per_replica=batch,
        decode_step_ms=step,
        decode_compute_ms=compute,
        decode_comm_ms=comm,
        decode_pp_comm_ms=pp_ms,
        prefill_ms=prefill_ms,
        prefill_comm_ms=prefill_comm,
        ttft_ms=prefill_ms + step,
        itl_ms=step,
        output_tok_s=output,
        total_tok_s=output * ratio,
        capacity_batch=cap_batch,
        capacity_output_tok_s=output_rate(cap_batch) * replicas * balance,
    )
