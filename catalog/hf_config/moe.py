"""A family's mixture of experts and multi-head latent attention, as config.json states them."""

from __future__ import annotations

from typing import Any

from catalog.hf_config.reader import ConfigReader


def moe_fields(cfg: ConfigReader, model_type: str) -> dict[str, Any]:
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


def checked_moe(cfg: ConfigReader, model_type: str) -> dict[str, Any]:
    """Return the mixture-of-experts fields (empty for a dense model), noting invalid ones."""
    moe = moe_fields(cfg, model_type)
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


def mla_fields(cfg: ConfigReader) -> dict[str, int]:
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
