"""Read a Hugging Face config.json into an Architecture, family by family.

The families are those vLLM serves: each one says which keys it needs, which keys its
transformers config class defaults (so a config.json may omit them), how its layers attend
(full, sliding window, chunked local, cross-attention) and how its MoE and MLP are shaped.
Multimodal wrappers (Gemma 3, Llama 4, Mistral 3, Qwen2-VL, Kimi-VL, Llava, Mllama) are read
through their `text_config`, and their vision tower is counted into the weights. Anything the
planner cannot size is refused with the exact key that is missing or wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from catalog.architecture import DTYPE_NAMES, Architecture, ArchitectureError
from catalog.quantization import QuantizationError, coarse_dtype, parse_quantization

# Keys every decoder family needs, by their canonical name, and the older spellings
# (GPT-2: n_embd, n_layer, n_head, n_inner, n_positions; OPT: ffn_dim; Falcon: ffn_hidden_size,
# num_kv_heads).
_ALIASES: dict[str, tuple[str, ...]] = {
    "hidden_size": ("hidden_size", "n_embd"),
    "num_hidden_layers": ("num_hidden_layers", "n_layer"),
    "num_attention_heads": ("num_attention_heads", "n_head"),
    "intermediate_size": ("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"),
    "num_key_value_heads": ("num_key_value_heads", "num_kv_heads"),
    "max_position_embeddings": ("max_position_embeddings", "n_positions"),
}
_DENSE_KEYS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
)


@dataclass(frozen=True, slots=True)
class Family:
    """What one model_type needs and defaults."""

    required: tuple[str, ...] = _DENSE_KEYS
    defaults: Mapping[str, Any] = field(default_factory=dict)  # the config class's defaults
    tie_default: bool = False
    bias_default: bool = False  # q/k/v projection biases
    mlp_matrices: int = 3
    mlp_bias: bool = False
    norms_per_layer: int = 2
    qk_norm: bool = False


# Families whose config may leave the MLP width out (n_inner null means 4 × hidden).
_SMALL_KEYS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
_FOUR_X_MLP = frozenset({"gpt2", "gptj", "gpt_bigcode", "bloom", "falcon"})
_MLA_KEYS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
_GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262_208,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 131_072,
    "sliding_window": 4096,
    "sliding_window_pattern": 6,
}
FAMILIES: dict[str, Family] = {
    "llama": Family(),
    "mistral": Family(),
    "qwen2": Family(bias_default=True),
    "qwen3": Family(qk_norm=True),
    "granite": Family(),
    "phi3": Family(),
    "olmo2": Family(),
    "gemma": Family(tie_default=True),
    "gemma2": Family(tie_default=True, norms_per_layer=4),
    "gemma3_text": Family(
        required=(),
        defaults=_GEMMA3_TEXT_DEFAULTS,
        tie_default=True,
        norms_per_layer=4,
        qk_norm=True,
    ),
    "phi": Family(bias_default=True, mlp_matrices=2, mlp_bias=True),
    "gpt2": Family(
        required=_SMALL_KEYS,
        tie_default=True,
        bias_default=True,
        mlp_matrices=2,
        mlp_bias=True,
    ),
    # OPT: fc1/fc2 with biases, biased q/k/v/out projections, LayerNorms with biases, learned
    # positions with an offset of 2 rows, embeddings tied unless the config says otherwise.
    "opt": Family(
        required=(
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "ffn_dim",
            "vocab_size",
        ),
        tie_default=True,
        bias_default=True,
        mlp_matrices=2,
        mlp_bias=True,
        norms_per_layer=4,
    ),
    # GPT-NeoX (Pythia), GPT-J, StarCoder 1 (gpt_bigcode) and BLOOM: fc-in/fc-out MLPs with
    # biases and LayerNorms with biases; GPT-J runs attention and MLP off one LayerNorm.
    "gpt_neox": Family(bias_default=True, mlp_matrices=2, mlp_bias=True, norms_per_layer=4),
    "gptj": Family(required=_SMALL_KEYS, mlp_matrices=2, mlp_bias=True, norms_per_layer=2),
    "gpt_bigcode": Family(
        required=_SMALL_KEYS,
        tie_default=True,
        bias_default=True,
        mlp_matrices=2,
        mlp_bias=True,
        norms_per_layer=4,
    ),
    # Falcon: fc-in/fc-out MLP without biases (4 x hidden unless ffn_hidden_size says), one
    # LayerNorm per layer (two with the new decoder architecture), tied embeddings.
    "falcon": Family(required=_SMALL_KEYS, tie_default=True, mlp_matrices=2, norms_per_layer=2),
    "starcoder2": Family(tie_default=True, bias_default=True, mlp_matrices=2, mlp_bias=True),
    "mllama_text": Family(required=(*_DENSE_KEYS, "cross_attention_layers")),
    "mixtral": Family(required=(*_DENSE_KEYS, "num_local_experts", "num_experts_per_tok")),
    "qwen2_moe": Family(
        required=(
            *_DENSE_KEYS,
            "num_experts",
            "num_experts_per_tok",
            "moe_intermediate_size",
            "shared_expert_intermediate_size",
        ),
        bias_default=True,
    ),
    "qwen3_moe": Family(
        required=(*_DENSE_KEYS, "num_experts", "num_experts_per_tok", "moe_intermediate_size"),
        qk_norm=True,
    ),
    "deepseek_v2": Family(
        required=(
            *_DENSE_KEYS,
            "n_routed_experts",
            "num_experts_per_tok",
            "moe_intermediate_size",
            *_MLA_KEYS,
        )
    ),
    "gpt_oss": Family(
        required=(*_DENSE_KEYS, "num_local_experts", "num_key_value_heads", "head_dim"),
        bias_default=True,
    ),
    "llama4_text": Family(
        required=(*_DENSE_KEYS, "num_local_experts", "num_experts_per_tok", "num_key_value_heads")
    ),
}
FAMILIES["deepseek_v3"] = FAMILIES["deepseek_v2"]
FAMILIES["bloom"] = FAMILIES["gpt_bigcode"]  # the same MLP, biases, norms and tie default
FAMILIES["gemma3"] = FAMILIES["gemma3_text"]
FAMILIES["qwen2_vl_text"] = FAMILIES["qwen2"]
FAMILIES["qwen2_5_vl_text"] = FAMILIES["qwen2"]

# Multimodal wrappers: the model_type their text_config has when it does not say.
WRAPPERS: dict[str, str] = {
    "gemma3": "gemma3_text",
    "llama4": "llama4_text",
    "mistral3": "mistral",
    "llava": "llama",
    "llava_next": "llama",
    "mllama": "mllama_text",
    "kimi_vl": "deepseek_v3",
    "qwen2_vl": "qwen2",
    "qwen2_5_vl": "qwen2",
    "paligemma": "gemma",
}
# Mistral's own repos ship params.json beside config.json, and vLLM then loads them in Mistral
# format (PixtralForConditionalGeneration), whose vision encoder is not sharded by TP: every
# rank holds all of it (Mistral-Small 3.1: 22.8 GiB per GPU at TP 2, 11.86 at TP 4, vLLM 0.19).
# Re-uploaded checkpoints (the quantized ones) are HF format only: Mistral3ForConditionalGeneration
# shards the tower (the w8a8 checkpoint: 24.07 GiB at TP 1, 12.11 at TP 2).
REPLICATED_VISION = frozenset({"mistral3"})
# Families vLLM serves that this planner cannot size yet: refused by name.
_UNSIZED = {
    "mamba": "state-space layers",
    "mamba2": "state-space layers",
    "jamba": "Mamba layers",
    "falcon_h1": "Mamba layers",
    "nemotron_h": "Mamba layers",
    "qwen3_next": "linear-attention layers",
    "bamba": "Mamba layers",
    "granitemoehybrid": "Mamba layers",
    "minimax_m1": "linear-attention layers",
    "whisper": "an encoder-decoder",
    "t5": "an encoder-decoder",
    "bart": "an encoder-decoder",
}
# No real dimension comes near this; 1e308 would overflow float maths downstream.
MAX_CONFIG_INT = 10**9
# Activations of gated (gate/up/down) MLPs: an unknown family using one is read as Llama-like.
_GATED_ACTIVATIONS = frozenset({"silu", "swish", "swiglu"})
_MOE_HINT_KEYS = ("num_experts", "n_routed_experts", "num_local_experts", "kv_lora_rank")
_HYBRID_LAYER_TYPES = ("linear_attention", "mamba", "conv", "mamba2")
KNOWN_TYPES = frozenset(FAMILIES) | frozenset(WRAPPERS)


def _fail(missing: list[str], errors: dict[str, str], label: str) -> ArchitectureError:
    if missing:
        return ArchitectureError(
            f"config.json for {label} is missing required keys: {', '.join(missing)}",
            missing=missing,
            errors={k: "required" for k in missing} | errors,
        )
    return ArchitectureError(
        "invalid config.json: " + "; ".join(f"{k}: {v}" for k, v in errors.items()),
        missing=[],
        errors=errors,
    )


class _Cfg:
    """One config dict with its family defaults, its key prefix for errors, and aliases."""

    def __init__(self, raw: Mapping[str, Any], family: Family, prefix: str) -> None:
        self.raw = raw
        self.family = family
        self.prefix = prefix
        self.errors: dict[str, str] = {}

    def value(self, key: str, default: Any = None) -> Any:
        for name in _ALIASES.get(key, (key,)):
            if self.raw.get(name) is not None:
                return self.raw[name]
        return self.family.defaults.get(key, default)

    def has(self, key: str) -> bool:
        return self.value(key) is not None

    def int(self, key: str, default: int = 0) -> int:
        """Return the key as a size: an integer in [0, MAX_CONFIG_INT] (digit strings too)."""
        value = self.value(key, default)
        if value is None:
            return default
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not integral or not 0 <= value <= MAX_CONFIG_INT:
            self.errors[self.prefix + key] = (
                f"must be an integer between 0 and {MAX_CONFIG_INT:,} (got {value!r:.40})"
            )
            return default
        return int(value)

    def bool(self, key: str, default: bool) -> bool:
        value = self.value(key)
        return default if value is None else bool(value)


def _layer_windows(cfg: _Cfg, model_type: str, num_layers: int) -> tuple[tuple[int, ...], str]:
    """Return the per-layer attention windows (0 full, n window, -1 cross-attention) and kind."""
    types = cfg.value("layer_types")
    window = cfg.int("sliding_window")
    if isinstance(types, list | tuple) and types:
        if len(types) != num_layers:
            cfg.errors[cfg.prefix + "layer_types"] = (
                f"has {len(types)} entries for {num_layers} layers"
            )
            return (), "sliding"
        bad = sorted({str(t) for t in types if str(t) in _HYBRID_LAYER_TYPES})
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


def _norms_per_layer(cfg: _Cfg, model_type: str, family: Family) -> int:
    """Return the hidden-size vectors of a layer's norms (Falcon's new decoder: two LayerNorms)."""
    if model_type == "falcon" and cfg.bool("new_decoder_architecture", False):
        return 4
    return family.norms_per_layer


def _learned_positions(cfg: _Cfg, model_type: str) -> int:
    """Return the rows of a learned position table (GPT-2, StarCoder 1; OPT 2 more), else 0."""
    if model_type in {"gpt2", "gpt_bigcode"}:
        return cfg.int("max_position_embeddings")
    if model_type == "opt":
        return cfg.int("max_position_embeddings", 2048) + 2
    return 0


def _moe_fields(cfg: _Cfg, model_type: str) -> dict[str, Any]:
    """Return the MoE fields of the Architecture for one family ({} for a dense model)."""
    if model_type == "mixtral":
        return {
            "num_experts": cfg.int("num_local_experts"),
            "experts_per_token": cfg.int("num_experts_per_tok"),
            "moe_intermediate_size": cfg.int("intermediate_size"),
        }
    if model_type in {"qwen2_moe", "qwen3_moe"}:
        mlp_only = cfg.value("mlp_only_layers") or []
        step = cfg.int("decoder_sparse_step", 1) or 1
        return {
            "num_experts": cfg.int("num_experts"),
            "experts_per_token": cfg.int("num_experts_per_tok"),
            "moe_intermediate_size": cfg.int("moe_intermediate_size"),
            "shared_expert_intermediate_size": cfg.int("shared_expert_intermediate_size"),
            "num_dense_layers": len(mlp_only),
            "moe_layer_step": step,
        }
    if model_type in {"deepseek_v2", "deepseek_v3"}:
        return {
            "num_experts": cfg.int("n_routed_experts"),
            "experts_per_token": cfg.int("num_experts_per_tok"),
            "moe_intermediate_size": cfg.int("moe_intermediate_size"),
            "num_shared_experts": cfg.int("n_shared_experts"),
            "num_dense_layers": cfg.int("first_k_dense_replace"),
            "moe_layer_step": cfg.int("moe_layer_freq", 1) or 1,
            "router_bias": model_type == "deepseek_v3",
        }
    if model_type == "gpt_oss":
        return {
            "num_experts": cfg.int("num_local_experts"),
            "experts_per_token": cfg.int("num_experts_per_tok", cfg.int("experts_per_token", 4)),
            "moe_intermediate_size": cfg.int("intermediate_size"),
            "router_bias": True,
            "expert_bias": True,
        }
    if model_type == "llama4_text":
        return {
            "num_experts": cfg.int("num_local_experts"),
            "experts_per_token": cfg.int("num_experts_per_tok"),
            "moe_intermediate_size": cfg.int("intermediate_size"),
            "num_shared_experts": 1,
            "moe_layer_step": cfg.int("interleave_moe_layer_step", 1) or 1,
        }
    return {}


_VISION_KEYS = (
    "embed_dim",
    "hidden_size",
    "num_hidden_layers",
    "depth",
    "num_layers",
    "intermediate_size",
    "num_global_layers",
    "patch_size",
    "temporal_patch_size",
    "projector_input_dim",
    "vision_output_dim",
)


def _vision_params(vc: Mapping[str, Any], wrapper: str, text_hidden: int) -> tuple[int, int]:
    """Return (vision tower + projector parameters, LM tokens of one image)."""
    h = int(vc.get("embed_dim") or vc.get("hidden_size") or 0)
    layers = int(vc.get("num_hidden_layers") or vc.get("depth") or vc.get("num_layers") or 0)
    if h <= 0 or layers <= 0:
        return 0, 0
    inter = int(vc.get("intermediate_size") or float(vc.get("mlp_ratio") or 4) * h)
    gated = wrapper in {"mistral3", "qwen2_5_vl"}
    per_layer = 4 * h * h + 4 * h + (3 if gated else 2) * h * inter + inter + 5 * h
    layers += int(vc.get("num_global_layers") or 0)  # mllama's global encoder
    patch = int(vc.get("patch_size") or 14)
    temporal = int(vc.get("temporal_patch_size") or 1)
    image_raw = vc.get("image_size") or 0
    image = int(image_raw[0] if isinstance(image_raw, list | tuple) else image_raw)
    grid = (image // patch) ** 2 if image else 0
    params = layers * per_layer + 3 * patch * patch * temporal * h + grid * h
    merge = vc.get("spatial_merge_size") or vc.get("merge_kernel_size") or 1
    merge_area = merge[0] * merge[1] if isinstance(merge, list | tuple) else int(merge) ** 2
    if wrapper == "llama4":
        shuffle_dim = int(vc.get("projector_input_dim") or 4 * h)
        out_dim = int(vc.get("vision_output_dim") or shuffle_dim)
        params += 4 * h * shuffle_dim + shuffle_dim * out_dim + out_dim * text_hidden
        merge_area = 4
    elif wrapper == "gemma3":
        params += h * text_hidden
    elif wrapper == "mllama":
        params += int(vc.get("vision_output_dim") or 5 * h) * text_hidden
    else:
        inner = h * merge_area
        params += inner * inner + inner * text_hidden if merge_area > 1 else h * text_hidden
        params += text_hidden * text_hidden if merge_area == 1 else 0
    tokens = grid // merge_area if grid else 0
    return params, tokens


def _text_config(config: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, str, str]:
    """Return (text config, its model_type, wrapper model_type or '', error key prefix)."""
    outer = str(config.get("model_type") or "").lower()
    text = config.get("text_config")
    if outer in WRAPPERS or isinstance(text, Mapping):
        if isinstance(text, Mapping):
            inner = str(text.get("model_type") or WRAPPERS.get(outer, "")).lower()
            if outer == "mllama":
                inner = "mllama_text"
            merged = {k: v for k, v in config.items() if k not in {"text_config", "model_type"}}
            merged.update(text)
            return merged, inner, outer, "text_config."
        if outer in {"qwen2_vl", "qwen2_5_vl"}:
            return config, WRAPPERS[outer], outer, ""
        raise ArchitectureError(
            f"config.json for {outer} is missing required keys: text_config",
            missing=["text_config"],
            errors={"text_config": "required"},
        )
    return config, outer, "", ""


def _family(text: Mapping[str, Any], model_type: str, prefix: str) -> Family:
    """Return the family of `model_type`, or a generic one for an unknown dense gated model."""
    if model_type in _UNSIZED:
        raise ArchitectureError(
            f"model_type {model_type!r} has {_UNSIZED[model_type]}, which this planner cannot "
            "size yet",
            missing=[],
            errors={prefix + "model_type": f"unsupported value {model_type!r}"},
        )
    family = FAMILIES.get(model_type)
    if family is not None:
        return family
    if any(k in text for k in _MOE_HINT_KEYS):
        raise ArchitectureError(
            f"unknown MoE/MLA architecture {model_type!r}; supported: {sorted(FAMILIES)}",
            missing=[],
            errors={prefix + "model_type": f"unsupported value {model_type!r}"},
        )
    activation = str(text.get("hidden_act") or text.get("activation_function") or "silu")
    if activation.lower() not in _GATED_ACTIVATIONS:
        # An unknown family read as Llama-like would count a third MLP matrix it may not have.
        raise ArchitectureError(
            f"model_type {model_type!r} is not a family this planner knows, and its "
            f"activation {activation!r} does not tell a two-matrix MLP from a gated one; "
            f"supported: {sorted(FAMILIES)}",
            missing=[],
            errors={prefix + "model_type": f"unsupported value {model_type!r}"},
        )
    return Family()


def _transformer_shape(cfg: _Cfg, model_type: str) -> tuple[int, int, int, int, int]:
    """Return (hidden, heads, layers, kv_heads, intermediate), noting invalid sizes in cfg."""
    prefix = cfg.prefix
    hidden = cfg.int("hidden_size")
    heads = cfg.int("num_attention_heads")
    layers = cfg.int("num_hidden_layers")
    kv_heads = cfg.int("num_key_value_heads", heads) or heads
    # GPT-2's n_inner null means 4 × n_embd (GPT-J, StarCoder 1 and BLOOM likewise).
    inter = cfg.int("intermediate_size", 4 * hidden if model_type in _FOUR_X_MLP else 0)
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


def _checked_moe(cfg: _Cfg, model_type: str) -> dict[str, Any]:
    """Return the mixture-of-experts fields (empty for a dense model), noting invalid ones."""
    moe = _moe_fields(cfg, model_type)
    if not moe:
        return moe
    prefix = cfg.prefix
    experts, active = moe["num_experts"], moe["experts_per_token"]
    if experts <= 0:
        key = {"deepseek_v2": "n_routed_experts", "deepseek_v3": "n_routed_experts"}.get(
            model_type, "num_experts" if "qwen" in model_type else "num_local_experts"
        )
        cfg.errors[prefix + key] = "must be a positive integer for a mixture-of-experts model"
    elif not 1 <= active <= experts:
        cfg.errors[prefix + "num_experts_per_tok"] = f"must be between 1 and {experts}"
    if moe["moe_intermediate_size"] <= 0:
        cfg.errors[prefix + "moe_intermediate_size"] = "must be a positive integer"
    return moe


def _vision(config: Mapping[str, Any], cfg: _Cfg, wrapper: str, hidden: int) -> tuple[int, int]:
    """Return (vision encoder parameters, tokens per image) of a multimodal wrapper, else 0s."""
    vision, mm_tokens = 0, 0
    vc = config.get("vision_config")
    if not (wrapper and isinstance(vc, Mapping)):
        return vision, mm_tokens
    vision_cfg = _Cfg(vc, Family(), "vision_config.")
    for key in _VISION_KEYS:
        vision_cfg.int(key)
    mm_cfg = _Cfg(config, Family(), "")
    per_image = mm_cfg.int("mm_tokens_per_image")
    cfg.errors.update(vision_cfg.errors | mm_cfg.errors)
    if not cfg.errors:
        try:
            vision, mm_tokens = _vision_params(vc, wrapper, hidden)
        except (TypeError, ValueError, IndexError):
            cfg.errors["vision_config"] = "holds a size that is not a number"
        mm_tokens = per_image or mm_tokens
    return vision, mm_tokens


def _rotary_positions(cfg: _Cfg, model_type: str) -> int:
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


def _mla_fields(cfg: _Cfg) -> dict[str, int]:
    """Return the multi-head latent attention fields (DeepSeek V2/V3), noting a missing rank."""
    if cfg.int("kv_lora_rank") <= 0:
        cfg.errors[cfg.prefix + "kv_lora_rank"] = "must be a positive integer for MLA"
    return {
        "kv_lora_rank": cfg.int("kv_lora_rank"),
        "q_lora_rank": cfg.int("q_lora_rank"),
        "qk_rope_head_dim": cfg.int("qk_rope_head_dim"),
        "qk_nope_head_dim": cfg.int("qk_nope_head_dim"),
        "v_head_dim": cfg.int("v_head_dim"),
        "num_mtp_layers": cfg.int("num_nextn_predict_layers"),
    }


def from_hf_config(config: Mapping[str, Any]) -> Architecture:
    """Return the Architecture described by a Hugging Face config.json dict.

    Raises ArchitectureError naming every missing or invalid key (nested keys dotted).
    """
    if not isinstance(config, Mapping):
        raise ArchitectureError(
            "config.json must be a JSON object", missing=[], errors={"config": "not an object"}
        )
    text, model_type, wrapper, prefix = _text_config(config)
    label = model_type or "unknown architecture"
    family = _family(text, model_type, prefix)
    cfg = _Cfg(text, family, prefix)
    missing = [prefix + k for k in family.required if not cfg.has(k)]
    if missing:
        raise _fail(missing, {}, label)
    hidden, heads, layers, kv_heads, inter = _transformer_shape(cfg, model_type)
    if cfg.errors:
        raise _fail([], cfg.errors, label)

    windows, window_kind = _layer_windows(cfg, model_type, layers)
    moe = _checked_moe(cfg, model_type)
    try:
        scheme = parse_quantization(config, layers)
    except QuantizationError as exc:
        cfg.errors[exc.field] = str(exc).split(": ", 1)[1]
        scheme = None
    if cfg.errors:
        raise _fail([], cfg.errors, label)
    vision, mm_tokens = _vision(config, cfg, wrapper, hidden)

    rotary_positions = _rotary_positions(cfg, model_type)
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
        "norms_per_layer": _norms_per_layer(cfg, model_type, family),
        "position_embeddings": _learned_positions(cfg, model_type),
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
        fields.update(_mla_fields(cfg))
    if cfg.errors:
        raise _fail([], cfg.errors, label)
    return Architecture(**fields)
