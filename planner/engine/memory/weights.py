"""The weights one GPU holds for a pipeline stage: sharded, quantized, padded and replicated the
way vLLM loads them.
"""

from __future__ import annotations

import math
from functools import lru_cache

from catalog.architecture import Architecture, mlp_params
from catalog.quantization import QuantScheme, coarse_dtype
from planner.engine.assumptions import DTYPE_BYTES, Assumptions
from planner.engine.memory.kv import activation_dtype_bytes
from planner.engine.mxfp4 import Mxfp4Kernel, expert_storage_factor


def partition_layers(num_layers: int, pp: int) -> list[int]:
    """Return layers per stage as vLLM does: the remainder goes to the stages before the last."""
    base = [num_layers // pp] * pp
    for i in range(num_layers % pp):
        base[-(i + 2) if pp > 1 else 0] += 1
    return base


def quantized_bytes_per_param(dtype: str, a: Assumptions) -> float:
    """Return bytes per linear-layer weight quantized at load time, with int4 group scales."""
    if dtype == "int4":
        return 0.5 + a.int4_scale_bytes_per_group / a.int4_group_size
    return DTYPE_BYTES[dtype]


def _attention_bytes_per_gpu(arch: Architecture, tp: int, qb: float, ab: float) -> float:
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
        return (replicated + sharded / tp) * qb + norms * ab
    q_dim = arch.num_attention_heads * arch.head_dim
    kv_dim_gpu = max(1, arch.num_kv_heads // tp) * arch.head_dim
    linear = (h * q_dim) / tp + 2 * h * kv_dim_gpu + (q_dim * h) / tp
    extra = 0.0
    if arch.attention_bias:
        extra += q_dim / tp + 2 * kv_dim_gpu
    if arch.qk_norm:
        extra += 2 * arch.head_dim
    return linear * qb + extra * ab


@lru_cache(maxsize=256)
def _moe_layer_indices(arch: Architecture) -> tuple[int, ...]:
    return tuple(i for i in range(arch.num_layers) if arch.is_moe_layer(i))


def _padded_vocab(vocab: int, tp: int) -> float:
    return math.ceil(vocab / 64) * 64 / tp


def checkpoint_scheme(arch: Architecture, dtype: str) -> QuantScheme | None:
    """Return the checkpoint's own quantization when it is served as stored, else None."""
    scheme = arch.quantization
    if scheme is not None and coarse_dtype(scheme) == dtype:
        return scheme
    return None


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
    mxfp4_kernel: Mxfp4Kernel = Mxfp4Kernel.TRITON,
) -> float:
    """Return the weight bytes on one GPU of a stage holding layers [layer_start, +layers).

    A pre-quantized checkpoint served as stored keeps every module its quantization_config
    leaves out (ignore lists, attention or lm_head kept 16-bit); quantizing at load time
    quantizes every linear layer but lm_head. Embeddings, norms and routers stay 16-bit.
    """
    ab = activation_dtype_bytes(dtype)
    scheme = checkpoint_scheme(arch, dtype)
    if scheme is not None:
        qb = scheme.bytes_per_param
    elif dtype in ("bf16", "fp16", "fp32"):
        qb = ab
    else:
        qb = quantized_bytes_per_param(dtype, a)

    end = layer_start + layers
    moe_layers = [i for i in _moe_layer_indices(arch) if layer_start <= i < end]
    n_moe = len(moe_layers)

    def kept(kind: str, among: list[int] | None = None) -> int:
        """Return how many layers of the stage keep module `kind` 16-bit (checkpoint's list)."""
        if scheme is None:
            return 0
        inside = [i for i in scheme.kept_layers(kind) if layer_start <= i < end]
        if among is None:
            return len(inside)
        return len(set(inside) & set(among))

    def mixed(kind: str, count: int, per_layer_params: float, among: list[int] | None) -> float:
        """Return bytes of `count` layers' module `kind`, the kept ones 16-bit."""
        k = kept(kind, among)
        return per_layer_params * ((count - k) * qb + k * ab)

    h = arch.hidden_size
    expert = mlp_params(arch, arch.moe_intermediate_size) / tp
    if scheme is not None and scheme.weight_dtype == "mxfp4":
        # Padded to the shapes the GPU's MXFP4 MoE kernel needs (mxfp4.py).
        expert *= expert_storage_factor(
            arch.hidden_size, arch.moe_intermediate_size / tp, mxfp4_kernel
        )
    shared = mlp_params(arch, arch.shared_expert_width) / tp if arch.shared_expert_width else 0.0
    router = arch.num_experts * h + (arch.num_experts if arch.router_bias else 0)
    k_att = kept("attention")
    total = (layers - k_att) * _attention_bytes_per_gpu(arch, tp, qb, ab)
    total += k_att * _attention_bytes_per_gpu(arch, tp, ab, ab)
    total += layers * arch.norms_per_layer * h * ab
    if n_moe:
        total += mixed("experts", n_moe, arch.num_experts * expert, moe_layers)
        if arch.expert_bias:
            total += n_moe * arch.num_experts * (2 * arch.moe_intermediate_size / tp + h) * ab
        total += mixed("shared_experts", n_moe, shared, moe_layers) + n_moe * router * ab
        if arch.shared_expert_intermediate_size:
            total += n_moe * h * ab  # shared_expert_gate
    dense = mlp_params(arch, arch.intermediate_size) / tp
    dense_layers = [i for i in range(layer_start, end) if i not in set(moe_layers)]
    total += mixed("mlp", layers - n_moe, dense, dense_layers if scheme else None)
    if arch.is_mla and a.mla_absorbed_copies:
        # vLLM's MLA keeps W_UK/W_UV split out of kv_b_proj in the activation dtype
        # (mla_attention.process_weights_after_loading), beside the checkpoint weight.
        heads_per_gpu = arch.num_attention_heads / tp
        per_layer = arch.kv_lora_rank * heads_per_gpu * (arch.qk_nope_head_dim + arch.v_head_dim)
        total += layers * per_layer * ab
    vocab_rows = _padded_vocab(arch.vocab_size, tp) * h
    if first:
        total += vocab_rows * ab + arch.position_embeddings * h * ab
        total += arch.vision_params / (1 if arch.vision_replicated else tp) * ab
    if last:
        total += h * ab
        if not (arch.tie_word_embeddings and single_stage):
            head_q = scheme is not None and scheme.lm_head_quantized
            total += vocab_rows * (qb if head_q else ab)
    # Rotary cos/sin caches in the model dtype (one per GPU); linear/dynamic RoPE scaling
    # stretches the cache by its factor, Gemma 3 keeps a second one for its local layers.
    rotary = arch.qk_rope_head_dim if arch.is_mla else arch.head_dim
    total += (arch.rotary_cache_positions or arch.max_position_embeddings) * rotary * ab
    return total
