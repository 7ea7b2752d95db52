"""Per-GPU memory the way vLLM V1 budgets it (gpu_worker.determine_available_memory).

requested = driver-visible memory × gpu_memory_utilization
KV budget = requested − weights − activation peak − non-torch memory − CUDA-graph estimate
KV tokens = blocks of 16 tokens; with pipeline parallelism the smallest stage decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.architecture import Architecture, attention_params
from planner.engine.assumptions import DTYPE_BYTES, GIB, Assumptions


@dataclass(frozen=True, slots=True, kw_only=True)
class StageMemory:
    """Memory of one GPU of one pipeline stage, in bytes."""

    layers: int
    weights_bytes: float
    activation_bytes: float
    non_torch_bytes: float
    cuda_graph_bytes: float
    requested_bytes: float
    visible_bytes: float
    kv_budget_bytes: float
    kv_bytes_per_token: float
    blocks: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryResult:
    stages: tuple[StageMemory, ...]
    kv_tokens: int
    blocks: int
    max_concurrency: float
    fits: bool
    reason: str

    @property
    def worst(self) -> StageMemory:
        """Return the stage that limits the KV cache."""
        return min(self.stages, key=lambda s: s.blocks)


def partition_layers(num_layers: int, pp: int) -> list[int]:
    """Return layers per stage as vLLM does: the remainder goes to the stages before the last."""
    base = [num_layers // pp] * pp
    for i in range(num_layers % pp):
        base[-(i + 2) if pp > 1 else 0] += 1
    return base


def quantized_bytes_per_param(dtype: str, a: Assumptions) -> float:
    """Return bytes per linear-layer weight, including group scales for int4."""
    if dtype == "int4":
        return 0.5 + a.int4_scale_bytes_per_group / a.int4_group_size
    return DTYPE_BYTES[dtype]


def kv_dtype_bytes(kv_cache_dtype: str) -> float:
    """Return KV-cache bytes per element ('auto' follows the 16-bit activation dtype)."""
    return 1.0 if kv_cache_dtype == "fp8" else 2.0


def kv_bytes_per_token(arch: Architecture, tp: int, layers: int, kv_cache_dtype: str) -> float:
    """Return KV-cache bytes per token on one GPU holding `layers` layers at tensor parallel `tp`.

    MLA caches one latent (kv_lora_rank + qk_rope_head_dim) per layer on every GPU; ordinary
    attention splits KV heads by TP and replicates them when TP exceeds the KV heads.
    """
    b = kv_dtype_bytes(kv_cache_dtype)
    if arch.is_mla:
        return layers * (arch.kv_lora_rank + arch.qk_rope_head_dim) * b
    heads_per_gpu = max(1, arch.num_kv_heads // tp)
    return 2.0 * layers * heads_per_gpu * arch.head_dim * b


def _attention_bytes_per_gpu(arch: Architecture, tp: int, qb: float) -> float:
    h = arch.hidden_size
    if arch.is_mla:
        heads = arch.num_attention_heads
        qk_head = arch.qk_nope_head_dim + arch.qk_rope_head_dim
        replicated = h * (arch.kv_lora_rank + arch.qk_rope_head_dim)
        if arch.q_lora_rank:
            replicated += h * arch.q_lora_rank
            sharded = arch.q_lora_rank * heads * qk_head
        else:
            sharded = h * heads * qk_head
        sharded += arch.kv_lora_rank * heads * (arch.qk_nope_head_dim + arch.v_head_dim)
        sharded += heads * arch.v_head_dim * h
        norms = arch.kv_lora_rank + arch.q_lora_rank
        return (replicated + sharded / tp) * qb + norms * 2.0
    q_dim = arch.num_attention_heads * arch.head_dim
    kv_dim_gpu = max(1, arch.num_kv_heads // tp) * arch.head_dim
    linear = (h * q_dim) / tp + 2 * h * kv_dim_gpu + (q_dim * h) / tp
    extra = 0.0
    if arch.attention_bias:
        extra += q_dim / tp + 2 * kv_dim_gpu
    if arch.qk_norm:
        extra += 2 * arch.head_dim
    return linear * qb + extra * 2.0


def _padded_vocab(vocab: int, tp: int) -> float:
    return math.ceil(vocab / 64) * 64 / tp


def stage_weight_bytes(
    arch: Architecture,
    dtype: str,
    tp: int,
    layer_start: int,
    layers: int,
    *,
    first: bool,
    last: bool,
    single_stage: bool,
    a: Assumptions,
) -> float:
    """Return the weight bytes on one GPU of a stage holding layers [layer_start, +layers).

    Embeddings, lm_head, norms, router and biases stay 16-bit in quantized checkpoints.
    """
    qb = quantized_bytes_per_param(dtype, a)
    h = arch.hidden_size
    total = 0.0
    attn = _attention_bytes_per_gpu(arch, tp, qb)
    dense = 3.0 * h * arch.intermediate_size / tp * qb
    expert = 3.0 * h * arch.moe_intermediate_size / tp * qb
    moe = (arch.num_experts + arch.num_shared_experts) * expert
    router = (arch.num_experts * h + (arch.num_experts if arch.router_bias else 0)) * 2.0
    end = layer_start + layers
    n_moe = max(0, end - max(layer_start, arch.num_dense_layers)) if arch.is_moe else 0
    total += layers * (attn + 2 * h * 2.0) + n_moe * (moe + router) + (layers - n_moe) * dense
    if arch.is_mla and a.mla_absorbed_copies:
        # vLLM's MLA keeps W_UK/W_UV split out of kv_b_proj in the activation dtype
        # (mla_attention.process_weights_after_loading), beside the checkpoint weight.
        heads_per_gpu = arch.num_attention_heads / tp
        per_layer = arch.kv_lora_rank * heads_per_gpu * (arch.qk_nope_head_dim + arch.v_head_dim)
        total += layers * per_layer * 2.0
    vocab_rows = _padded_vocab(arch.vocab_size, tp) * h * 2.0
    if first:
        total += vocab_rows
    if last:
        total += h * 2.0
        if not (arch.tie_word_embeddings and single_stage):
            total += vocab_rows
    # Rotary cos/sin cache in the model dtype (one per GPU).
    rotary = arch.qk_rope_head_dim if arch.is_mla else arch.head_dim
    total += arch.max_position_embeddings * rotary * 2.0
    return total


def default_batched_tokens(visible_gib: float, gpu_slug: str, a: Assumptions) -> int:
    """Return vLLM 0.32's default max_num_batched_tokens for `vllm serve` on this GPU."""
    if visible_gib >= 160:
        return a.default_batched_tokens_huge_gpu
    if visible_gib >= 70 and "a100" not in gpu_slug:
        return a.default_batched_tokens_large_gpu
    return a.default_batched_tokens_small_gpu


def default_max_num_seqs(visible_gib: float, gpu_slug: str, a: Assumptions) -> int:
    """Return vLLM 0.32's default max_num_seqs for `vllm serve` on this GPU."""
    if visible_gib >= 160 or (visible_gib >= 70 and "a100" not in gpu_slug):
        return a.default_max_num_seqs_large_gpu
    return a.default_max_num_seqs_small_gpu


def activation_peak_bytes(
    arch: Architecture,
    tp: int,
    tokens: int,
    max_num_seqs: int,
    *,
    last_stage: bool,
    a: Assumptions,
) -> float:
    """Return the torch peak of the profile run: a dummy forward, then a dummy sampler."""
    widths = []
    if arch.num_layers - arch.num_moe_layers > 0:
        widths.append(arch.intermediate_size)
    if arch.is_moe:
        widths.append(
            (arch.experts_per_token + arch.num_shared_experts) * arch.moe_intermediate_size
        )
    mlp = max(widths) / tp
    q_dim = arch.num_attention_heads * arch.head_dim / tp
    forward = (
        tokens
        * 2.0
        * (a.activation_mlp_factor * mlp + a.activation_hidden_factor * arch.hidden_size)
        + tokens * 2.0 * q_dim
    )
    if not last_stage:
        return forward
    reqs = min(max_num_seqs, tokens)
    copies = a.sampler_logit_copies if a.flashinfer_sampler else a.sampler_logit_copies_native
    sampler = reqs * arch.vocab_size * 4.0 * copies
    return max(forward, sampler + reqs * arch.hidden_size * 2.0)


def plan_memory(
    arch: Architecture,
    *,
    dtype: str,
    kv_cache_dtype: str,
    tp: int,
    pp: int,
    visible_gib: float,
    gpu_slug: str,
    utilization: float,
    max_model_len: int,
    max_num_batched_tokens: int | None,
    max_num_seqs: int | None,
    a: Assumptions,
) -> MemoryResult:
    """Return the per-GPU memory budget of one replica and its KV capacity."""
    visible = visible_gib * GIB
    requested = visible * utilization
    tokens = max_num_batched_tokens or default_batched_tokens(visible_gib, gpu_slug, a)
    seqs = max_num_seqs or default_max_num_seqs(visible_gib, gpu_slug, a)
    non_torch = (a.non_torch_single_gpu_gib if tp * pp == 1 else a.non_torch_multi_gpu_gib) * GIB
    graphs = a.cuda_graph_gib * GIB if a.subtract_cuda_graph_memory else 0.0
    stages: list[StageMemory] = []
    start = 0
    for s, layers in enumerate(partition_layers(arch.num_layers, pp)):
        first, last = s == 0, s == pp - 1
        weights = stage_weight_bytes(
            arch, dtype, tp, start, layers, first=first, last=last, single_stage=pp == 1, a=a
        )
        act = activation_peak_bytes(arch, tp, tokens, seqs, last_stage=last, a=a)
        budget = requested - weights - act - non_torch - graphs
        per_token = kv_bytes_per_token(arch, tp, layers, kv_cache_dtype)
        blocks = max(0, math.floor(budget / (per_token * a.block_size_tokens))) if budget > 0 else 0
        stages.append(
            StageMemory(
                layers=layers,
                weights_bytes=weights,
                activation_bytes=act,
                non_torch_bytes=non_torch,
                cuda_graph_bytes=graphs,
                requested_bytes=requested,
                visible_bytes=visible,
                kv_budget_bytes=budget,
                kv_bytes_per_token=per_token,
                blocks=blocks,
            )
        )
        start += layers
    blocks = min(s.blocks for s in stages)
    kv_tokens = blocks * a.block_size_tokens
    max_conc = blocks / math.ceil(max_model_len / a.block_size_tokens)
    worst = min(stages, key=lambda s: s.kv_budget_bytes)
    if worst.kv_budget_bytes <= 0:
        fits, reason = False, "weights and overheads exceed the requested memory"
    elif kv_tokens < max_model_len:
        fits, reason = False, f"KV cache holds {kv_tokens} tokens < max_model_len {max_model_len}"
    else:
        fits, reason = True, ""
    return MemoryResult(
        stages=tuple(stages),
        kv_tokens=kv_tokens,
        blocks=blocks,
        max_concurrency=max_conc,
        fits=fits,
        reason=reason,
    )


def attention_params_per_layer(arch: Architecture) -> int:
    """Return attention parameters of one layer (re-exported for the throughput model)."""
    return attention_params(arch)
