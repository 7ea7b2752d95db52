"""The time of one vLLM V1 engine step: a batch of decode tokens plus prefill chunks.

stage time = GEMM time + attention time + kernel launches + TP all-reduces × (1 − overlap)
  GEMM time      = max(dense weights / reachable HBM bandwidth,
                       2 × active dense params × tokens / (TFLOPS × MFU))
                 + touched experts / the fused-MoE kernels' bandwidth
                 + 2 × active expert params × tokens / the fused-MoE kernels' rate
  attention time = max(KV read / reachable HBM bandwidth,
                       attention pairs × FLOPs per pair / (TFLOPS × MFU))
step time  = pp × stage time(tokens / pp) + (pp − 1) hops, over the PP efficiency (bubbles),
             + the executor's round trip when the stages sit on different nodes,
             + scheduler/sampler overhead per step and per running sequence (or the longer of
             the two where vLLM schedules asynchronously: serving/host.py).

Decode-only steps replay CUDA graphs (a small launch cost per layer); steps that carry a
prefill chunk run piecewise graphs with a larger per-layer cost.

With measured kernels (ctx.kernels, see backend.py) the stage time is their forward pass instead
of the roofline; the pipeline, the host overheads and, off NVLink, the all-reduces stay ours.
"""

from __future__ import annotations

from planner.engine.serving.context import ServingContext, expert_fraction, pp_hop_ms, tp_comm_ms
from planner.engine.serving.host import step_wall_ms
from planner.engine.serving.kernel_times import KernelTableMiss, StepShape


def stage_ms(
    ctx: ServingContext,
    *,
    decode_seqs: float,
    prefill_tokens: float,
    kv_read_tokens: float,
    attn_pairs: float,
) -> tuple[float, float]:
    """Return (stage time, its TP communication) for one micro-batch on one stage, in ms."""
    tokens = decode_seqs + prefill_tokens
    if tokens <= 0:
        return 0.0, 0.0
    rate = ctx.prefill_flops_per_ms if prefill_tokens > 0 else ctx.decode_flops_per_ms
    # The GEMMs (weights) and the attention (KV cache) are separate kernels that run one after
    # the other, each bound by its own roofline: at hundreds of sequences the GEMMs turn
    # compute-bound while attention stays bound by its KV reads, and the two add up.
    # (flops_per_token is the whole model's share per GPU, the experts' the slowest stage's)
    dense_flops = tokens * max(ctx.flops_per_token - ctx.expert_flops_per_token, 0.0)
    t_dense = max(ctx.dense_weight_bytes / ctx.hbm_bytes_per_ms, dense_flops / rate)
    t_gemm = t_dense + experts_ms(ctx, tokens)
    attn_rate = (
        ctx.prefill_attn_flops_per_ms if prefill_tokens > 0 else ctx.decode_attn_flops_per_ms
    )
    t_attn = max(
        kv_read_tokens * ctx.kv_bytes_per_token / ctx.kv_hbm_bytes_per_ms,
        attn_pairs * ctx.attn_flops_per_pair / attn_rate,
    )
    launch = ctx.launch_mixed_ms if prefill_tokens > 0 else ctx.launch_decode_ms
    comm = tp_comm_ms(ctx, tokens)
    return t_gemm + t_attn + launch + comm * (1 - ctx.overlap), comm


def experts_ms(ctx: ServingContext, tokens: float) -> float:
    """Return the routed experts' time for `tokens` on one stage (0 for a dense model).

    The fused-MoE kernels read the touched experts and then multiply: the measured tables show
    the two adding up from tens to thousands of tokens (bench/fit_moe_compute.py)."""
    read = ctx.expert_weight_bytes * expert_fraction(ctx, tokens) / ctx.expert_hbm_bytes_per_ms
    return read + tokens * ctx.expert_flops_per_token / ctx.expert_flops_per_ms


def kernel_stage_ms(
    ctx: ServingContext,
    *,
    decode_seqs: float,
    prefill_tokens: float,
    decode_kv_tokens: float,
    attn_pairs: float,
) -> float | None:
    """Return one stage's time for a micro-batch from the measured kernels (ctx.kernels).

    None when the tables refuse this shape: the caller times the step with the roofline, and
    the kernels' fallback log counts it (the prediction says so).
    """
    assert ctx.kernels is not None
    shape = StepShape(
        decode_seqs=decode_seqs,
        decode_context=decode_kv_tokens / decode_seqs if decode_seqs > 0 else 0.0,
        prefill_tokens=prefill_tokens,
        prefill_pairs=max(attn_pairs - decode_kv_tokens, 0.0),
    )
    try:
        compute, all_reduce = ctx.kernels.forward_ms(shape)
    except KernelTableMiss as miss:
        ctx.kernels.fallbacks.record(str(miss))
        return None
    if not ctx.kernels.owns_all_reduce:
        all_reduce = tp_comm_ms(ctx, decode_seqs + prefill_tokens) * ctx.pp * (1 - ctx.overlap)
    return (compute + all_reduce) / ctx.pp


def step_ms(
    ctx: ServingContext,
    *,
    decode_seqs: float,
    prefill_tokens: float,
    kv_read_tokens: float,
    attn_pairs: float,
    running_seqs: float,
    decode_kv_tokens: float | None = None,
) -> float:
    """Return the wall time of one engine step over all pipeline stages, in ms.

    `decode_kv_tokens` is the decodes' share of `kv_read_tokens` (default: all of it when no
    prefill rides along); only measured kernels need the split.
    """
    if decode_seqs + prefill_tokens <= 0:
        return 0.0
    pp = ctx.pp
    stage: float | None = None
    if ctx.kernels is not None:
        if decode_kv_tokens is None:
            decode_kv_tokens = kv_read_tokens if prefill_tokens <= 0 else 0.0
        stage = kernel_stage_ms(
            ctx,
            decode_seqs=decode_seqs / pp,
            prefill_tokens=prefill_tokens / pp,
            decode_kv_tokens=decode_kv_tokens / pp,
            attn_pairs=attn_pairs / pp,
        )
    if stage is None:
        stage, _ = stage_ms(
            ctx,
            decode_seqs=decode_seqs / pp,
            prefill_tokens=prefill_tokens / pp,
            kv_read_tokens=kv_read_tokens / pp,
            attn_pairs=attn_pairs / pp,
        )
    hops = (pp - 1) * pp_hop_ms(ctx, (decode_seqs + prefill_tokens) / pp)
    gpu = (pp * stage + hops) / ctx.pp_efficiency / ctx.gpu_time_share + ctx.pp_step_overhead_ms
    cpu = ctx.step_overhead_ms + running_seqs * ctx.per_seq_overhead_ms
    return step_wall_ms(gpu, cpu, overlapped=ctx.async_scheduling)


def decode_step_ms(ctx: ServingContext, seqs: float, context_tokens: float) -> float:
    """Return a decode-only step of `seqs` sequences that each attend to `context_tokens`."""
    seen = visible_context(ctx, context_tokens)
    return step_ms(
        ctx,
        decode_seqs=seqs,
        prefill_tokens=0,
        kv_read_tokens=seqs * seen,
        attn_pairs=seqs * seen,
        running_seqs=seqs,
    )


def attention_pairs(ctx: ServingContext, start: float, chunk: float) -> float:
    """Return query×key pairs of a prefill chunk of `chunk` tokens after `start` cached ones."""
    if chunk <= 0:
        return 0.0
    end = start + chunk
    if ctx.sliding_window and end > ctx.sliding_window:
        return chunk * ctx.sliding_window
    # Σ over the chunk's queries of their causal context: chunk × (start + (chunk + 1) / 2).
    return chunk * (start + (chunk + 1) / 2)


def visible_context(ctx: ServingContext, tokens: float) -> float:
    """Return the KV tokens one decode query reads (capped by a sliding window)."""
    if ctx.sliding_window:
        return min(tokens, ctx.sliding_window)
    return tokens
