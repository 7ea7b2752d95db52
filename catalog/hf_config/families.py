"""The model families vLLM serves, as their config.json spells them: required keys, the defaults of
their transformers config class, wrappers around a text model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Keys every decoder family needs, by their canonical name, and the older spellings
# (GPT-2: n_embd, n_layer, n_head, n_inner, n_positions; OPT: ffn_dim; Falcon: ffn_hidden_size,
# num_kv_heads).
ALIASES: dict[str, tuple[str, ...]] = {
    "hidden_size": ("hidden_size", "n_embd"),
    "num_hidden_layers": ("num_hidden_layers", "n_layer"),
    "num_attention_heads": ("num_attention_heads", "n_head"),
    "intermediate_size": ("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"),
    "num_key_value_heads": ("num_key_value_heads", "num_kv_heads"),
    "max_position_embeddings": ("max_position_embeddings", "n_positions"),
}


DENSE_KEYS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
)


@dataclass(frozen=True, slots=True)
class Family:
    """What one model_type needs and defaults."""

    required: tuple[str, ...] = DENSE_KEYS
    defaults: Mapping[str, Any] = field(default_factory=dict)  # the config class's defaults
    tie_default: bool = False
    bias_default: bool = False  # q/k/v projection biases
    mlp_matrices: int = 3
    mlp_bias: bool = False
    norms_per_layer: int = 2
    qk_norm: bool = False


# Families whose config may leave the MLP width out (n_inner null means 4 × hidden).
SMALL_KEYS = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


FOUR_X_MLP = frozenset({"gpt2", "gptj", "gpt_bigcode", "bloom", "falcon"})


MLA_KEYS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")


GEMMA3_TEXT_DEFAULTS = {
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
        defaults=GEMMA3_TEXT_DEFAULTS,
        tie_default=True,
        norms_per_layer=4,
        qk_norm=True,
    ),
    "phi": Family(bias_default=True, mlp_matrices=2, mlp_bias=True),
    "gpt2": Family(
        required=SMALL_KEYS,
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
    "gptj": Family(required=SMALL_KEYS, mlp_matrices=2, mlp_bias=True, norms_per_layer=2),
    "gpt_bigcode": Family(
        required=SMALL_KEYS,
        tie_default=True,
        bias_default=True,
        mlp_matrices=2,
        mlp_bias=True,
        norms_per_layer=4,
    ),
    # Falcon: fc-in/fc-out MLP without biases (4 x hidden unless ffn_hidden_size says), one
    # LayerNorm per layer (two with the new decoder architecture), tied embeddings.
    "falcon": Family(required=SMALL_KEYS, tie_default=True, mlp_matrices=2, norms_per_layer=2),
    "starcoder2": Family(tie_default=True, bias_default=True, mlp_matrices=2, mlp_bias=True),
    "mllama_text": Family(required=(*DENSE_KEYS, "cross_attention_layers")),
    "mixtral": Family(required=(*DENSE_KEYS, "num_local_experts", "num_experts_per_tok")),
    "qwen2_moe": Family(
        required=(
            *DENSE_KEYS,
            "num_experts",
            "num_experts_per_tok",
            "moe_intermediate_size",
            "shared_expert_intermediate_size",
        ),
        bias_default=True,
    ),
    "qwen3_moe": Family(
        required=(*DENSE_KEYS, "num_experts", "num_experts_per_tok", "moe_intermediate_size"),
        qk_norm=True,
    ),
    "deepseek_v2": Family(
        required=(
            *DENSE_KEYS,
            "n_routed_experts",
            "num_experts_per_tok",
            "moe_intermediate_size",
            *MLA_KEYS,
        )
    ),
    "gpt_oss": Family(
        required=(*DENSE_KEYS, "num_local_experts", "num_key_value_heads", "head_dim"),
        bias_default=True,
    ),
    "llama4_text": Family(
        required=(*DENSE_KEYS, "num_local_experts", "num_experts_per_tok", "num_key_value_heads")
    ),
}


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
UNSIZED = {
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


# Activations of gated (gate/up/down) MLPs: an unknown family using one is read as Llama-like.
GATED_ACTIVATIONS = frozenset({"silu", "swish", "swiglu"})


MOE_HINT_KEYS = ("num_experts", "n_routed_experts", "num_local_experts", "kv_lora_rank")


HYBRID_LAYER_TYPES = ("linear_attention", "mamba", "conv", "mamba2")


KNOWN_TYPES = frozenset(FAMILIES) | frozenset(WRAPPERS)
