"""from_hf_config: a config.json into an Architecture, each feature read by its own module."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.architecture import DTYPE_NAMES, Architecture, ArchitectureError
from catalog.hf_config.attention import (
    layer_windows,
    learned_positions,
    norms_per_layer,
    read_rotary_positions,
    transformer_shape,
)
from catalog.hf_config.families import (
    FAMILIES,
    GATED_ACTIVATIONS,
    MOE_HINT_KEYS,
    REPLICATED_VISION,
    UNSIZED,
    Family,
)
from catalog.hf_config.moe import checked_moe, mla_fields
from catalog.hf_config.reader import ConfigReader, config_error
from catalog.hf_config.vision import text_config, vision_tower
from catalog.quantization import QuantizationError, coarse_dtype, parse_quantization

FAMILIES["deepseek_v3"] = FAMILIES["deepseek_v2"]
FAMILIES["bloom"] = FAMILIES["gpt_bigcode"]  # the same MLP, biases, norms and tie default
FAMILIES["gemma3"] = FAMILIES["gemma3_text"]
FAMILIES["qwen2_vl_text"] = FAMILIES["qwen2"]
FAMILIES["qwen2_5_vl_text"] = FAMILIES["qwen2"]


def _family(text: Mapping[str, Any], model_type: str, prefix: str) -> Family:
    """Return the family of `model_type`, or a generic one for an unknown dense gated model."""
    if model_type in UNSIZED:
        raise ArchitectureError(
            f"model_type {model_type!r} has {UNSIZED[model_type]}, which this planner cannot "
            "size yet",
            missing=[],
            errors={prefix + "model_type": f"unsupported value {model_type!r}"},
        )
    family = FAMILIES.get(model_type)
    if family is not None:
        return family
    if any(k in text for k in MOE_HINT_KEYS):
        raise ArchitectureError(
            f"unknown MoE/MLA architecture {model_type!r}; supported: {sorted(FAMILIES)}",
            missing=[],
            errors={prefix + "model_type": f"unsupported value {model_type!r}"},
        )
    activation = str(text.get("hidden_act") or text.get("activation_function") or "silu")
    if activation.lower() not in GATED_ACTIVATIONS:
        # An unknown family read as Llama-like would count a third MLP matrix it may not have.
        raise ArchitectureError(
            f"model_type {model_type!r} is not a family this planner knows, and its "
            f"activation {activation!r} does not tell a two-matrix MLP from a gated one; "
            f"supported: {sorted(FAMILIES)}",
            missing=[],
            errors={prefix + "model_type": f"unsupported value {model_type!r}"},
        )
    return Family()


def from_hf_config(config: Mapping[str, Any]) -> Architecture:
    """Return the Architecture described by a Hugging Face config.json dict.

    Raises ArchitectureError naming every missing or invalid key (nested keys dotted).
    """
    if not isinstance(config, Mapping):
        raise ArchitectureError(
            "config.json must be a JSON object", missing=[], errors={"config": "not an object"}
        )
    text, model_type, wrapper, prefix = text_config(config)
    label = model_type or "unknown architecture"
    family = _family(text, model_type, prefix)
    cfg = ConfigReader(text, family, prefix)
    missing = [prefix + k for k in family.required if not cfg.has(k)]
    if missing:
        raise config_error(missing, {}, label)
    hidden, heads, layers, kv_heads, inter = transformer_shape(cfg, model_type)
    if cfg.errors:
        raise config_error([], cfg.errors, label)

    windows, window_kind = layer_windows(cfg, model_type, layers)
    moe = checked_moe(cfg, model_type)
    try:
        scheme = parse_quantization(config, layers)
    except QuantizationError as exc:
        cfg.errors[exc.field] = str(exc).split(": ", 1)[1]
        scheme = None
    if cfg.errors:
        raise config_error([], cfg.errors, label)
    vision, mm_tokens = vision_tower(config, cfg, wrapper, hidden)

    rotary_positions = read_rotary_positions(cfg, model_type)
    dtype_raw = config.get("torch_dtype") or config.get("dtype") or text.get("torch_dtype")
    is_mla = model_type in {"deepseek_v2", "deepseek_v3"}
    fields: dict[str, Any] = {
        "model_type": model_type or "generic",
        "hidden_size": hidden,
        "num_layers": layers,
        "num_attention_heads": heads,
        "num_kv_heads": heads if is_mla else kv_heads,
        "head_dim": (
            cfg.int("qk_nope_head_dim") + cfg.int("qk_rope_head_dim")
            if is_mla
            else cfg.int("head_dim") or hidden // heads
        ),
        "intermediate_size": inter,
        "vocab_size": cfg.int("vocab_size"),
        "max_position_embeddings": cfg.int("max_position_embeddings", 4096),
        "tie_word_embeddings": cfg.bool("tie_word_embeddings", family.tie_default),
        "attention_bias": cfg.bool("attention_bias", cfg.bool("use_bias", family.bias_default)),
        "qk_norm": family.qk_norm,
        "default_dtype": DTYPE_NAMES.get(str(dtype_raw or ""), "bf16"),
        "checkpoint_quantization": coarse_dtype(scheme),
        "quantization": scheme,
        "mlp_matrices": family.mlp_matrices,
        "mlp_bias": cfg.bool("mlp_bias", family.mlp_bias),
        "norms_per_layer": norms_per_layer(cfg, model_type, family),
        "position_embeddings": learned_positions(cfg, model_type),
        "layer_windows": windows,
        "window_kind": window_kind,
        "rotary_cache_positions": rotary_positions,
        "vision_params": vision,
        "vision_replicated": wrapper in REPLICATED_VISION and scheme is None,
        "mm_tokens_per_item": mm_tokens,
        **moe,
    }
    if fields["head_dim"] <= 0:
        key = "qk_nope_head_dim" if is_mla else "head_dim"
        cfg.errors[prefix + key] = (
            "must be a positive integer (hidden_size // num_attention_heads is 0 without it)"
        )
    if is_mla:
        fields.update(mla_fields(cfg))
    if cfg.errors:
        raise config_error([], cfg.errors, label)
    return Architecture(**fields)
