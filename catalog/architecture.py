"""LLM architectures read from a Hugging Face config.json, and their parameter counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from catalog.quantization import QuantScheme

DTYPE_NAMES: dict[str, str] = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "bf16",  # vLLM's dtype="auto" serves float32 checkpoints in 16 bit.
    "float": "bf16",
    "bf16": "bf16",
    "fp16": "fp16",
}


class ArchitectureError(ValueError):
    """A config.json that cannot be turned into an Architecture.

    `missing` lists the config keys that are absent (dotted for nested keys, e.g.
    `text_config.num_hidden_layers`); `errors` maps a key to what is wrong with it.
    """

    def __init__(self, message: str, *, missing: list[str], errors: dict[str, str]) -> None:
        super().__init__(message)
        self.missing = missing
        self.errors = errors


@dataclass(frozen=True, slots=True, kw_only=True)
class Architecture:
    """The shape of a decoder-only LLM, enough to count parameters and size its KV cache."""

    model_type: str
    hidden_size: int
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    tie_word_embeddings: bool = False
    attention_bias: bool = False
    qk_norm: bool = False
    # MoE (num_experts == 0 means dense).
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    num_shared_experts: int = 0
    num_dense_layers: int = 0
    router_bias: bool = False
    # MLA (kv_lora_rank == 0 means ordinary multi-head / grouped-query attention).
    kv_lora_rank: int = 0
    q_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    # Extra layers present in the checkpoint but not served (DeepSeek's MTP module).
    num_mtp_layers: int = 0
    default_dtype: str = "bf16"
    checkpoint_quantization: str | None = None
    # MLP shape: 3 matrices (gate, up, down) or 2 (fc1, fc2: GPT-2, Phi-2), biases or not.
    mlp_matrices: int = 3
    mlp_bias: bool = False
    norms_per_layer: int = 2  # Gemma 2/3: 4 (pre/post attention and feed-forward)
    position_embeddings: int = 0  # learned absolute positions (GPT-2): rows of hidden_size
    # MoE details: a shared expert of its own width (qwen2_moe), MoE on every n-th layer (Llama 4).
    shared_expert_intermediate_size: int = 0
    moe_layer_step: int = 1
    expert_bias: bool = False  # gpt-oss experts carry biases
    # Attention per layer: 0 = full attention, n > 0 = a window of n tokens (sliding window or
    # chunked local attention, see window_kind), -1 = cross-attention only (no per-token KV).
    # Empty means every layer is full attention.
    layer_windows: tuple[int, ...] = ()
    window_kind: str = "sliding"  # sliding | chunked
    # Positions of the rotary cos/sin caches (0: max_position_embeddings).
    rotary_cache_positions: int = 0
    # Multimodal: vision tower + projector parameters (16-bit), LM tokens of one image.
    vision_params: int = 0
    vision_replicated: bool = False  # every TP rank holds the whole tower (vLLM's Pixtral-HF)
    mm_tokens_per_item: int = 0
    # What the checkpoint quantized, module by module (None: a 16-bit checkpoint).
    quantization: QuantScheme | None = field(default=None, compare=True)

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def num_moe_layers(self) -> int:
        return self.moe_layers_in(0, self.num_layers) if self.is_moe else 0

    def is_moe_layer(self, index: int) -> bool:
        """Return whether layer `index` (0-based) carries experts rather than a dense MLP."""
        if not self.is_moe or index < self.num_dense_layers:
            return False
        return (index + 1) % max(1, self.moe_layer_step) == 0

    def moe_layers_in(self, start: int, count: int) -> int:
        """Return how many of layers [start, start + count) carry experts."""
        return sum(1 for i in range(start, start + count) if self.is_moe_layer(i))

    def window_of(self, index: int) -> int:
        """Return layer `index`'s attention window (0 = full, -1 = cross-attention only)."""
        return self.layer_windows[index] if self.layer_windows else 0

    @property
    def is_hybrid(self) -> bool:
        """Return whether layers differ in their KV-cache kind (windowed or cross-attention)."""
        return any(w != 0 for w in self.layer_windows)

    @property
    def shared_expert_width(self) -> int:
        """Return the total intermediate width of the shared experts of one MoE layer."""
        if self.shared_expert_intermediate_size:
            return self.shared_expert_intermediate_size
        return self.num_shared_experts * self.moe_intermediate_size


# Fields read from a config.json only: inventory keeps them in the stored file, not in columns.
CONFIG_ONLY_FIELDS = frozenset(
    {
        "mlp_matrices",
        "mlp_bias",
        "norms_per_layer",
        "position_embeddings",
        "shared_expert_intermediate_size",
        "moe_layer_step",
        "expert_bias",
        "layer_windows",
        "window_kind",
        "rotary_cache_positions",
        "vision_params",
        "vision_replicated",
        "mm_tokens_per_item",
        "quantization",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ParameterBreakdown:
    """Parameter counts by component (counts, not bytes)."""

    embedding: int
    attention_per_layer: int
    dense_mlp_per_layer: int
    experts_per_layer: int
    active_experts_per_layer: int
    shared_experts_per_layer: int
    router_per_layer: int
    norms_per_layer: int
    final_norm: int
    lm_head: int
    vision: int
    position_embedding: int
    num_dense_layers: int
    num_moe_layers: int
    total: int
    active: int

    def as_dict(self) -> dict[str, int]:
        """Return the breakdown as a plain dict."""
        return {name: getattr(self, name) for name in self.__slots__}


def attention_params(arch: Architecture) -> int:
    """Return the parameters of one attention block (projections, biases, per-head norms)."""
    h = arch.hidden_size
    if arch.is_mla:
        qk_head = arch.qk_nope_head_dim + arch.qk_rope_head_dim
        heads = arch.num_attention_heads
        if arch.q_lora_rank:
            q = h * arch.q_lora_rank + arch.q_lora_rank + arch.q_lora_rank * heads * qk_head
        else:
            q = h * heads * qk_head
        kv_a = h * (arch.kv_lora_rank + arch.qk_rope_head_dim) + arch.kv_lora_rank
        kv_b = arch.kv_lora_rank * heads * (arch.qk_nope_head_dim + arch.v_head_dim)
        o = heads * arch.v_head_dim * h
        return q + kv_a + kv_b + o
    q_dim = arch.num_attention_heads * arch.head_dim
    kv_dim = arch.num_kv_heads * arch.head_dim
    params = h * q_dim + 2 * h * kv_dim + q_dim * h
    if arch.attention_bias:
        params += q_dim + 2 * kv_dim
    if arch.qk_norm:
        params += 2 * arch.head_dim
    return params


def mlp_params(arch: Architecture, width: int) -> int:
    """Return the parameters of one MLP (or one expert) of intermediate `width`."""
    h = arch.hidden_size
    params = arch.mlp_matrices * h * width
    if arch.mlp_bias:
        params += (arch.mlp_matrices - 1) * width + h
    return params


@lru_cache(maxsize=256)
def parameter_breakdown(arch: Architecture) -> ParameterBreakdown:
    """Return parameter counts by component, the total and the active (per-token) count.

    The vision tower counts in the total, not in the active (per generated token) count.
    """
    h = arch.hidden_size
    embedding = arch.vocab_size * h
    lm_head = 0 if arch.tie_word_embeddings else arch.vocab_size * h
    positions = arch.position_embeddings * h
    attention = attention_params(arch)
    dense_mlp = mlp_params(arch, arch.intermediate_size)
    expert = mlp_params(arch, arch.moe_intermediate_size)
    experts = arch.num_experts * expert
    active_experts = arch.experts_per_token * expert
    shared = mlp_params(arch, arch.shared_expert_width) if arch.shared_expert_width else 0
    if arch.shared_expert_intermediate_size:
        shared += h  # qwen2_moe's shared_expert_gate
    router = arch.num_experts * h + (arch.num_experts if arch.router_bias else 0)
    norms = arch.norms_per_layer * h
    n_moe = arch.num_moe_layers
    n_dense = arch.num_layers - n_moe
    base = (
        embedding
        + lm_head
        + positions
        + h
        + arch.num_layers * (attention + norms)
        + n_dense * dense_mlp
    )
    total = base + n_moe * (experts + shared + router) + arch.vision_params
    active = base + n_moe * (active_experts + shared + router)
    return ParameterBreakdown(
        embedding=embedding,
        attention_per_layer=attention,
        dense_mlp_per_layer=dense_mlp if n_dense else 0,
        experts_per_layer=experts,
        active_experts_per_layer=active_experts,
        shared_experts_per_layer=shared,
        router_per_layer=router if n_moe else 0,
        norms_per_layer=norms,
        final_norm=h,
        lm_head=lm_head,
        vision=arch.vision_params,
        position_embedding=positions,
        num_dense_layers=n_dense,
        num_moe_layers=n_moe,
        total=total,
        active=active,
    )
