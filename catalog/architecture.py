"""LLM architectures read from a Hugging Face config.json, and their parameter counts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

DTYPE_NAMES: dict[str, str] = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float32": "bf16",  # vLLM's dtype="auto" serves float32 checkpoints in 16 bit.
    "float": "bf16",
    "bf16": "bf16",
    "fp16": "fp16",
}

DENSE_TYPES = frozenset({"llama", "mistral", "qwen2", "qwen3"})
MOE_TYPES = frozenset({"qwen3_moe", "mixtral", "deepseek_v3", "deepseek_v2"})
KNOWN_TYPES = DENSE_TYPES | MOE_TYPES

_DENSE_KEYS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
)
_REQUIRED: dict[str, tuple[str, ...]] = {
    "llama": _DENSE_KEYS,
    "mistral": _DENSE_KEYS,
    "qwen2": _DENSE_KEYS,
    "qwen3": _DENSE_KEYS,
    "qwen3_moe": (
        *_DENSE_KEYS,
        "num_experts",
        "num_experts_per_tok",
        "moe_intermediate_size",
    ),
    "mixtral": (*_DENSE_KEYS, "num_local_experts", "num_experts_per_tok"),
    "deepseek_v3": (
        *_DENSE_KEYS,
        "n_routed_experts",
        "num_experts_per_tok",
        "moe_intermediate_size",
        "kv_lora_rank",
        "qk_rope_head_dim",
        "qk_nope_head_dim",
        "v_head_dim",
    ),
}
_REQUIRED["deepseek_v2"] = _REQUIRED["deepseek_v3"]
_MOE_HINT_KEYS = ("num_experts", "n_routed_experts", "num_local_experts", "kv_lora_rank")


class ArchitectureError(ValueError):
    """A config.json that cannot be turned into an Architecture.

    `missing` lists the config keys that are absent; `errors` maps a key to what is wrong with it.
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
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def num_moe_layers(self) -> int:
        return self.num_layers - self.num_dense_layers if self.is_moe else 0

    def is_moe_layer(self, index: int) -> bool:
        """Return whether layer `index` (0-based) carries experts rather than a dense MLP."""
        return self.is_moe and index >= self.num_dense_layers


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
    num_dense_layers: int
    num_moe_layers: int
    total: int
    active: int

    def as_dict(self) -> dict[str, int]:
        """Return the breakdown as a plain dict."""
        return {name: getattr(self, name) for name in self.__slots__}


# No real dimension comes near this; 1e308 would overflow float maths downstream.
MAX_CONFIG_INT = 10**9


def _int(config: Mapping[str, Any], key: str, default: int = 0) -> int:
    """Return config[key] as a size: an integer in [0, MAX_CONFIG_INT], else ArchitectureError."""
    value = config.get(key, default)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not integral or not 0 <= value <= MAX_CONFIG_INT:
        message = f"must be an integer between 0 and {MAX_CONFIG_INT:,} (got {value!r:.40})"
        raise ArchitectureError(f"{key}: {message}", missing=[], errors={key: message})
    return int(value)


def _quantization(config: Mapping[str, Any]) -> str | None:
    """Return the weight dtype of a pre-quantized checkpoint ('fp8', 'int8', 'int4') or None."""
    qc = config.get("quantization_config")
    if not isinstance(qc, Mapping):
        return None
    method = str(qc.get("quant_method", "")).lower()
    bits = qc.get("bits") or qc.get("w_bit") or qc.get("weight_bits")
    if method in {"fp8", "fbgemm_fp8", "modelopt"}:
        return "fp8"
    if method in {"awq", "gptq", "awq_marlin", "gptq_marlin"}:
        return "int8" if bits == 8 else "int4"
    if method == "bitsandbytes":
        return "int8" if qc.get("load_in_8bit") else "int4"
    if method == "compressed-tensors":
        for group in (qc.get("config_groups") or {}).values():
            weights = group.get("weights") or {}
            nbits = weights.get("num_bits")
            kind = weights.get("type", "int")
            if nbits == 8:
                return "fp8" if kind == "float" else "int8"
            if nbits == 4:
                return "int4"
    return None


def from_hf_config(config: Mapping[str, Any]) -> Architecture:
    """Return the Architecture described by a Hugging Face config.json dict.

    Raises ArchitectureError naming every missing or invalid key.
    """
    if not isinstance(config, Mapping):
        raise ArchitectureError(
            "config.json must be a JSON object", missing=[], errors={"config": "not an object"}
        )
    model_type = str(config.get("model_type", "")).lower()
    if model_type in KNOWN_TYPES:
        required = _REQUIRED[model_type]
    elif any(k in config for k in _MOE_HINT_KEYS):
        raise ArchitectureError(
            f"unknown MoE/MLA architecture {model_type!r}; supported: {sorted(KNOWN_TYPES)}",
            missing=[],
            errors={"model_type": f"unsupported value {model_type!r}"},
        )
    else:
        required = _DENSE_KEYS
    missing = [k for k in required if config.get(k) is None]
    if missing:
        label = model_type or "unknown architecture"
        raise ArchitectureError(
            f"config.json for {label} is missing required keys: {', '.join(missing)}",
            missing=missing,
            errors={k: "required" for k in missing},
        )

    hidden = _int(config, "hidden_size")
    heads = _int(config, "num_attention_heads")
    kv_heads = _int(config, "num_key_value_heads", heads) or heads
    errors: dict[str, str] = {}
    for key, value in (
        ("hidden_size", hidden),
        ("num_hidden_layers", _int(config, "num_hidden_layers")),
        ("num_attention_heads", heads),
        ("vocab_size", _int(config, "vocab_size")),
    ):
        if value <= 0:
            errors[key] = "must be a positive integer"
    if heads > 0 and kv_heads > 0 and heads % kv_heads != 0:
        errors["num_key_value_heads"] = (
            f"num_attention_heads ({heads}) must be divisible by num_key_value_heads ({kv_heads})"
        )
    if errors:
        raise ArchitectureError(
            "invalid config.json: " + "; ".join(f"{k}: {v}" for k, v in errors.items()),
            missing=[],
            errors=errors,
        )

    head_dim = _int(config, "head_dim") or hidden // heads
    dtype = DTYPE_NAMES.get(str(config.get("torch_dtype") or config.get("dtype") or ""), "bf16")
    common: dict[str, Any] = {
        "model_type": model_type or "generic",
        "hidden_size": hidden,
        "num_layers": _int(config, "num_hidden_layers"),
        "num_attention_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": _int(config, "intermediate_size"),
        "vocab_size": _int(config, "vocab_size"),
        "max_position_embeddings": _int(config, "max_position_embeddings", 4096),
        "tie_word_embeddings": bool(config.get("tie_word_embeddings", False)),
        "attention_bias": bool(config.get("attention_bias", model_type == "qwen2")),
        "qk_norm": model_type in {"qwen3", "qwen3_moe"},
        "default_dtype": dtype,
        "checkpoint_quantization": _quantization(config),
    }
    if model_type == "qwen3_moe":
        mlp_only = config.get("mlp_only_layers") or []
        return Architecture(
            **common,
            num_experts=_int(config, "num_experts"),
            experts_per_token=_int(config, "num_experts_per_tok"),
            moe_intermediate_size=_int(config, "moe_intermediate_size"),
            num_dense_layers=len(mlp_only),
        )
    if model_type == "mixtral":
        return Architecture(
            **common,
            num_experts=_int(config, "num_local_experts"),
            experts_per_token=_int(config, "num_experts_per_tok"),
            moe_intermediate_size=_int(config, "intermediate_size"),
        )
    if model_type in {"deepseek_v3", "deepseek_v2"}:
        common["num_kv_heads"] = heads
        common["head_dim"] = _int(config, "qk_nope_head_dim") + _int(config, "qk_rope_head_dim")
        return Architecture(
            **common,
            num_experts=_int(config, "n_routed_experts"),
            experts_per_token=_int(config, "num_experts_per_tok"),
            moe_intermediate_size=_int(config, "moe_intermediate_size"),
            num_shared_experts=_int(config, "n_shared_experts"),
            num_dense_layers=_int(config, "first_k_dense_replace"),
            router_bias=model_type == "deepseek_v3",
            kv_lora_rank=_int(config, "kv_lora_rank"),
            q_lora_rank=_int(config, "q_lora_rank"),
            qk_rope_head_dim=_int(config, "qk_rope_head_dim"),
            qk_nope_head_dim=_int(config, "qk_nope_head_dim"),
            v_head_dim=_int(config, "v_head_dim"),
            num_mtp_layers=_int(config, "num_nextn_predict_layers"),
        )
    return Architecture(**common)


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


@lru_cache(maxsize=256)
def parameter_breakdown(arch: Architecture) -> ParameterBreakdown:
    """Return parameter counts by component, the total and the active (per-token) count."""
    h = arch.hidden_size
    embedding = arch.vocab_size * h
    lm_head = 0 if arch.tie_word_embeddings else arch.vocab_size * h
    attention = attention_params(arch)
    dense_mlp = 3 * h * arch.intermediate_size
    expert = 3 * h * arch.moe_intermediate_size
    experts = arch.num_experts * expert
    active_experts = arch.experts_per_token * expert
    shared = arch.num_shared_experts * expert
    router = arch.num_experts * h + (arch.num_experts if arch.router_bias else 0)
    norms = 2 * h
    n_dense = arch.num_layers - arch.num_moe_layers
    n_moe = arch.num_moe_layers
    base = embedding + lm_head + h + arch.num_layers * (attention + norms) + n_dense * dense_mlp
    total = base + n_moe * (experts + shared + router)
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
        num_dense_layers=n_dense,
        num_moe_layers=n_moe,
        total=total,
        active=active,
    )
