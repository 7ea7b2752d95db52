"""What one replica of a candidate layout is, reduced to the numbers a scheduler step needs.

Built once per candidate (pure arithmetic on the architecture, the GPU datasheet, the memory
plan and the links), then used for every simulated step. All byte and FLOP figures are per GPU of
the slowest pipeline stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.architecture import Architecture, parameter_breakdown
from catalog.generations import pre_ampere
from planner.engine import network
from planner.engine.assumptions import Assumptions
from planner.engine.memory import MemoryResult
from planner.engine.network import Link
from planner.engine.serving.backend import ROOFLINE_CHOICE, BackendChoice, KernelTimes
from planner.engine.serving.efficiency import kernel_efficiency
from planner.engine.serving.host import (
    EngineEra,
    async_scheduling,
    engine_era,
    host_overheads,
    mixed_steps_replay_full_graphs,
    prefill_first,
)
from planner.engine.serving.kernels import (
    gpu_generation,
    kernel_speed,
    moe_compute_share,
    moe_fixed_scale,
    moe_read_share,
)
from planner.engine.spec import GpuSpec
from planner.engine.spec.values import NIC_KINDS


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingContext:
    """One replica: the constants of its step time, its KV capacity and scheduler limits."""

    label: str
    tp: int
    pp: int
    layers_per_stage: int
    hidden_size: int
    # memory side (bytes, per GPU of the slowest stage)
    dense_weight_bytes: float
    expert_weight_bytes: float
    experts: int
    experts_per_token: int
    moe_routing_token_share: float
    kv_bytes_per_token: float
    hbm_bytes_per_ms: float
    kv_hbm_bytes_per_ms: float  # the attention kernels' KV reads (MLA's run slower)
    expert_hbm_bytes_per_ms: float
    # compute side (FLOPs per GPU)
    flops_per_token: float
    attn_flops_per_pair: float
    prefill_flops_per_ms: float
    decode_flops_per_ms: float
    # The routed experts' part of flops_per_token, at the fused-MoE kernels' own rate
    # (kernels.moe_compute_share), prefill and decode alike.
    expert_flops_per_token: float = 0.0
    expert_flops_per_ms: float = math.inf
    # attention runs in 16 bit at its own efficiency, whatever the weights' dtype
    prefill_attn_flops_per_ms: float
    decode_attn_flops_per_ms: float
    sliding_window: int  # 0: full attention
    # fixed costs (ms)
    launch_decode_ms: float
    launch_mixed_ms: float
    step_overhead_ms: float
    per_seq_overhead_ms: float
    async_scheduling: bool  # the engine's CPU work overlaps the GPU's (serving/host.py)
    request_overhead_ms: float
    # the API server's serial work (serving/frontend.py)
    frontend_request_ms: float
    frontend_prompt_token_us: float
    frontend_token_us: float
    # communication
    tp_link: Link
    pp_link: Link
    all_reduces_per_layer: int
    activation_bytes: float
    overlap: float
    pp_efficiency: float
    pp_step_overhead_ms: float  # per step, when pipeline stages sit on different nodes
    # scheduler limits
    max_num_seqs: int
    max_num_batched_tokens: int
    kv_blocks: int
    block_size: int
    prefix_caching: bool = True
    # Measured forward-pass times replacing the roofline (None: the roofline times the steps).
    kernels: KernelTimes | None = None
    backend: BackendChoice = ROOFLINE_CHOICE
    # The share of the GPU's time this replica gets (0.5 when it shares the GPU with another
    # model's instance): every GPU step takes 1/share as long, the host's CPU work does not.
    gpu_time_share: float = 1.0
    # The engine the version runs on this GPU (host.py), and V0's default scheduler: a step
    # runs whole prompts or decodes, prompts first.
    era: EngineEra = EngineEra.V1
    prefill_first: bool = False

    @property
    def kv_tokens(self) -> int:
        return self.kv_blocks * self.block_size


def _sliding_window(arch: Architecture) -> int:
    """Return the attention window when every layer slides (Mistral v0.1 style), else 0."""
    windows = set(arch.layer_windows)
    if len(windows) != 1 or arch.window_kind != "sliding":
        return 0
    (window,) = windows
    return max(window, 0)


def _expert_compute(
    arch: Architecture,
    gpu: GpuSpec,
    active_expert_params: float,
    tp: int,
    dtype: str,
    a: Assumptions,
) -> tuple[float, float]:
    """Return (routed-expert FLOPs per token, the fused-MoE kernels' FLOPs per ms) on one GPU.

    The kernels reach a share of the dense BF16 peak per weight format (measured tables,
    kernels.py), lowered on thin expert slices: n / (n + moe_shard_knee) with n the slice width
    per GPU. A generation without tables keeps the dense GEMMs' prefill rate as the wide-slice
    share.
    """
    if not arch.is_moe:
        return 0.0, math.inf
    generation = gpu_generation(gpu.slug, gpu.fp8_support)
    share = moe_compute_share(dtype, generation)
    if share is None:
        speed = kernel_speed(dtype, generation)
        share = speed.compute * kernel_efficiency(gpu.slug, generation).compute * a.prefill_mfu
    width = arch.moe_intermediate_size / tp
    rate = gpu.bf16_dense_tflops * 1e12 / 1e3 * share * width / (width + a.moe_shard_knee)
    return 2.0 * active_expert_params / tp, rate


def _attn_flops_per_pair(arch: Architecture, layers: int, tp: int) -> float:
    """Return attention FLOPs per (query token, context token) pair on one GPU.

    QKᵀ and PV are 2 FLOPs per multiply-add each; MLA attends over the absorbed latent
    (kv_lora_rank + rope dims) per head.
    """
    heads = max(1, arch.num_attention_heads // tp)
    if arch.is_mla:
        dims = (arch.kv_lora_rank + arch.qk_rope_head_dim) + arch.kv_lora_rank
    else:
        dims = 2 * arch.head_dim
    return 2.0 * heads * dims * layers


def build_context(
    arch: Architecture,
    gpu: GpuSpec,
    mem: MemoryResult,
    *,
    tp: int,
    pp: int,
    tp_link: Link,
    pp_link: Link,
    dtype: str,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    a: Assumptions,
    overlap: float,
    label: str = "",
    kernels: KernelTimes | None = None,
    backend: BackendChoice = ROOFLINE_CHOICE,
    vllm_version: str | None = None,
    max_model_len: int | None = None,
    chunked_prefill: bool | None = None,
) -> ServingContext:
    """Return the serving context of one replica of TP×PP on `gpu` with `dtype` weights.

    With `kernels`, steps are timed by those measured forward passes instead of the roofline.
    `vllm_version` (default: the assumptions') decides whether scheduling is asynchronous, how
    heavy the engine's host work is, and (with `max_model_len`) whether V0's prompt-first
    scheduler runs (`chunked_prefill`, when a run states it, overrides the version's default).
    """
    stage = max(mem.stages, key=lambda s: s.weights_bytes)
    b = parameter_breakdown(arch)
    expert_share = 0.0
    if arch.is_moe:
        expert_share = (b.experts_per_layer * b.num_moe_layers) / max(b.total, 1)
    generation = gpu_generation(gpu.slug, gpu.fp8_support)
    speed = kernel_speed(dtype, generation)
    eff = kernel_efficiency(gpu.slug, generation)
    hbm = gpu.hbm_bandwidth_gbs * 1e9 / 1e3 * a.hbm_efficiency * speed.memory * eff.memory
    tflops = gpu.bf16_dense_tflops * 1e12 / 1e3 * speed.compute * eff.compute
    attn_tflops = gpu.bf16_dense_tflops * 1e12 / 1e3 * eff.attention
    layers = stage.layers
    # MoE and MLA layers run extra small kernels every step; count the stage's share of them.
    moe_layers = arch.num_moe_layers * layers / max(arch.num_layers, 1)
    moe_fixed_us = a.moe_layer_fixed_us * moe_fixed_scale(dtype, generation)
    fixed_ms = (
        moe_layers * moe_fixed_us + (layers * a.mla_layer_fixed_us if arch.is_mla else 0.0)
    ) / 1e3
    expert_flops_per_token, expert_flops_per_ms = _expert_compute(
        arch, gpu, b.active_experts_per_layer * moe_layers, tp, dtype, a
    )
    version = vllm_version or a.vllm_version
    mixed_launch_us = (
        a.launch_per_layer_decode_us
        if mixed_steps_replay_full_graphs(version)
        else a.launch_per_layer_mixed_us
    )
    era = engine_era(version, pre_ampere=pre_ampere(gpu.slug))
    step_overhead_ms, per_seq_overhead_ms = host_overheads(era, a, gpus=tp * pp)
    return ServingContext(
        label=label,
        tp=tp,
        pp=pp,
        layers_per_stage=layers,
        hidden_size=arch.hidden_size,
        dense_weight_bytes=stage.weights_bytes * (1 - expert_share),
        expert_weight_bytes=stage.weights_bytes * expert_share,
        experts=arch.num_experts,
        experts_per_token=arch.experts_per_token,
        moe_routing_token_share=a.moe_routing_token_share,
        kv_bytes_per_token=stage.kv_bytes_per_token,
        hbm_bytes_per_ms=hbm,
        kv_hbm_bytes_per_ms=hbm * (a.mla_kv_read_efficiency if arch.is_mla else 1.0),
        expert_hbm_bytes_per_ms=hbm * a.moe_hbm_efficiency * moe_read_share(dtype, generation),
        flops_per_token=2.0 * b.active / (tp * pp),
        expert_flops_per_token=expert_flops_per_token,
        expert_flops_per_ms=expert_flops_per_ms,
        attn_flops_per_pair=_attn_flops_per_pair(arch, layers, tp),
        prefill_flops_per_ms=tflops * a.prefill_mfu,
        decode_flops_per_ms=tflops * a.decode_mfu,
        prefill_attn_flops_per_ms=attn_tflops * a.prefill_mfu,
        decode_attn_flops_per_ms=attn_tflops * a.decode_mfu,
        sliding_window=_sliding_window(arch),
        launch_decode_ms=layers * a.launch_per_layer_decode_us / 1e3 + fixed_ms,
        launch_mixed_ms=layers * mixed_launch_us / 1e3 + fixed_ms,
        step_overhead_ms=step_overhead_ms,
        per_seq_overhead_ms=per_seq_overhead_ms,
        async_scheduling=async_scheduling(version, pp),
        request_overhead_ms=a.request_overhead_ms,
        frontend_request_ms=a.frontend_request_ms,
        frontend_prompt_token_us=a.frontend_prompt_token_us,
        frontend_token_us=a.frontend_token_us,
        tp_link=tp_link,
        pp_link=pp_link,
        all_reduces_per_layer=a.all_reduces_per_layer,
        activation_bytes=a.activation_bytes,
        overlap=overlap,
        pp_efficiency=a.pp_efficiency if pp > 1 else 1.0,
        pp_step_overhead_ms=(
            a.pp_cross_node_step_overhead_ms if pp > 1 and pp_link.kind in NIC_KINDS else 0.0
        ),
        max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        kv_blocks=max(mem.blocks, 0),
        block_size=a.block_size_tokens,
        kernels=kernels,
        backend=backend,
        gpu_time_share=a.gpu_time_share,
        era=era,
        prefill_first=prefill_first(era, max_model_len, chunked_prefill),
    )


def expert_fraction(ctx: ServingContext, tokens: float) -> float:
    """Return the share of a layer's routed experts that `tokens` tokens touch.

    Uniform top-k routing of `moe_routing_token_share` × the tokens: real batches pick overlapping
    experts a little more often than independent uniform draws would.
    """
    if ctx.experts <= 0:
        return 1.0
    p = ctx.experts_per_token / ctx.experts
    return float(1.0 - (1.0 - p) ** (max(tokens, 1.0) * ctx.moe_routing_token_share))


def tp_comm_ms(ctx: ServingContext, tokens: float) -> float:
    """Return the TP all-reduces of one stage for `tokens` tokens (latency + bandwidth), in ms."""
    return network.tp_comm_ms(
        hidden=ctx.hidden_size,
        layers=ctx.layers_per_stage,
        tokens=tokens,
        tp=ctx.tp,
        link=ctx.tp_link,
        activation_bytes=ctx.activation_bytes,
        all_reduces_per_layer=ctx.all_reduces_per_layer,
    )


def pp_hop_ms(ctx: ServingContext, tokens: float) -> float:
    """Return one activation transfer between two pipeline stages, in ms."""
    if ctx.pp <= 1 or tokens <= 0:
        return 0.0
    size = tokens * ctx.hidden_size * ctx.activation_bytes
    return size / (ctx.pp_link.bandwidth_gbs * 1e9) * 1e3 + ctx.pp_link.latency_us / 1e3
