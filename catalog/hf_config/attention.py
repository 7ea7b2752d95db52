"""How a family's layers attend and are shaped: windows, norms, positions, the sizes."""

from __future__ import annotations

from collections.abc import Mapping

from catalog.hf_config.families import FOUR_X_MLP, HYBRID_LAYER_TYPES, Family
from catalog.hf_config.reader import ConfigReader


def layer_windows(
    cfg: ConfigReader, model_type: str, num_layers: int
) -> tuple[tuple[int, ...], str]:
    """Return the per-layer attention windows (0 full, n window, -1 cross-attention) and kind."""
    types = cfg.value("layer_types")
    window = cfg.int("sliding_window")
    if isinstance(types, list | tuple) and types:
        if len(types) != num_layers:
            cfg.errors[cfg.prefix + "layer_types"] = (
                f"has {len(types)} entries for {num_layers} layers"
            )
            return (), "sliding"
        bad = sorted({str(t) for t in types if str(t) in HYBRID_LAYER_TYPES})
        if bad:
            cfg.errors[cfg.prefix + "layer_types"] = (
                f"{', '.join(bad)} layers are not sized by this planner"
            )
            return (), "sliding"
        chunk = cfg.int("attention_chunk_size")
        out = []
        for t in types:
            if t == "sliding_attention":
                out.append(window)
            elif t == "chunked_attention":
                out.append(chunk)
            else:
                out.append(0)
        if any(w < 0 for w in out) or ("sliding_attention" in types and window <= 0):
            cfg.errors[cfg.prefix + "sliding_window"] = "required by sliding_attention layers"
        if "chunked_attention" in types and chunk <= 0:
            cfg.errors[cfg.prefix + "attention_chunk_size"] = "required by chunked_attention layers"
        kind = "chunked" if "chunked_attention" in types else "sliding"
        return tuple(out), kind
    if model_type == "gemma2":
        if window <= 0:
            cfg.errors[cfg.prefix + "sliding_window"] = "required for gemma2 (alternating layers)"
        return tuple(window if i % 2 == 0 else 0 for i in range(num_layers)), "sliding"
    if model_type == "gemma3_text":
        pattern = cfg.int("sliding_window_pattern", 6) or 6
        return (
            tuple(0 if (i + 1) % pattern == 0 else window for i in range(num_layers)),
            "sliding",
        )
    if model_type == "llama4_text":
        chunk = cfg.int("attention_chunk_size")
        if chunk <= 0:
            return (), "sliding"
        rope = cfg.value("no_rope_layers")
        if isinstance(rope, list | tuple) and len(rope) == num_layers:
            return tuple(chunk if r else 0 for r in rope), "chunked"
        interval = cfg.int("no_rope_layer_interval", 4) or 4
        return tuple(0 if (i + 1) % interval == 0 else chunk for i in range(num_layers)), "chunked"
    if model_type == "mllama_text":
        cross = cfg.value("cross_attention_layers") or []
        return tuple(-1 if i in cross else 0 for i in range(num_layers)), "sliding"
    if model_type == "mistral" and window > 0:
        return tuple(window for _ in range(num_layers)), "sliding"
    if model_type in {"qwen2", "qwen2_moe"} and cfg.bool("use_sliding_window", False) and window:
        first = cfg.int("max_window_layers", num_layers)
        return tuple(window if i >= first else 0 for i in range(num_layers)), "sliding"
    return (), "sliding"


def norms_per_layer(cfg: ConfigReader, model_type: str, family: Family) -> int:
    """Return the hidden-size vectors of a layer's norms (Falcon's new decoder: two LayerNorms)."""
    if model_type == "falcon" and cfg.bool("new_decoder_architecture", False):
        return 4
    return family.norms_per_layer


def learned_positions(cfg: ConfigReader, model_type: str) -> int:
    """Return the rows of a learned position table (GPT-2, StarCoder 1; OPT 2 more), else 0."""
    if model_type in {"gpt2", "gpt_bigcode"}:
        return cfg.int("max_position_embeddings")
    if model_type == "opt":
        return cfg.int("max_position_embeddings", 2048) + 2
    return 0


def transformer_shape(cfg: ConfigReader, model_type: str) -> tuple[int, int, int, int, int]:
    """Return (hidden, heads, layers, kv_heads, intermediate), noting invalid sizes in cfg."""
    prefix = cfg.prefix
    hidden = cfg.int("hidden_size")
    heads = cfg.int("num_attention_heads")
    layers = cfg.int("num_hidden_layers")
    kv_heads = cfg.int("num_key_value_heads", heads) or heads
    # GPT-2's n_inner null means 4 × n_embd (GPT-J, StarCoder 1 and BLOOM likewise).
    inter = cfg.int("intermediate_size", 4 * hidden if model_type in FOUR_X_MLP else 0)
    if model_type == "gpt_bigcode" and cfg.bool("multi_query", True):
        kv_heads = 1
    if model_type == "falcon" and not cfg.bool("new_decoder_architecture", False):
        kv_heads = 1 if cfg.bool("multi_query", True) else heads
    if model_type == "llama4_text":
        inter = cfg.int("intermediate_size_mlp", inter)
    for key, value in (
        ("hidden_size", hidden),
        ("num_hidden_layers", layers),
        ("num_attention_heads", heads),
        ("vocab_size", cfg.int("vocab_size")),
    ):
        if value <= 0:
            cfg.errors[prefix + key] = "must be a positive integer"
    projected = cfg.int("word_embed_proj_dim", hidden) if model_type == "opt" else hidden
    if projected != hidden:
        cfg.errors[prefix + "word_embed_proj_dim"] = (
            f"an embedding width ({projected}) other than hidden_size ({hidden}) is not sized "
            "by this planner"
        )
    if heads > 0 and kv_heads > 0 and heads % kv_heads != 0:
        cfg.errors[prefix + "num_key_value_heads"] = (
            f"num_attention_heads ({heads}) must be divisible by num_key_value_heads ({kv_heads})"
        )
    return hidden, heads, layers, kv_heads, inter


def read_rotary_positions(cfg: ConfigReader, model_type: str) -> int:
    """Return the positions the rotary cache holds (scaled by linear or dynamic RoPE)."""
    positions = cfg.int("max_position_embeddings", 4096)
    rope = cfg.value("rope_scaling") or {}
    rotary_positions = positions
    if isinstance(rope, Mapping) and str(rope.get("rope_type", rope.get("type"))) in {
        "linear",
        "dynamic",
    }:
        rotary_positions = int(positions * float(rope.get("factor") or 1))
    if model_type == "gemma3_text":
        rotary_positions += positions  # the local layers' own, unscaled cache
    return rotary_positions
