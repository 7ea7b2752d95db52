"""Catalog: real config.json values give the published parameter counts."""

import pytest

from catalog.architecture import ArchitectureError, parameter_breakdown
from catalog.data import load_gpus, load_models
from catalog.hf_config import from_hf_config

MODELS = load_models()


@pytest.mark.parametrize("slug", sorted(MODELS))
def test_total_parameters_match_published_within_1_percent(slug):
    entry = MODELS[slug]
    total = parameter_breakdown(entry.architecture).total
    assert total == pytest.approx(entry.published_total_params, rel=0.01)


@pytest.mark.parametrize("slug", [s for s in sorted(MODELS) if MODELS[s].published_active_params])
def test_active_parameters_match_published(slug):
    # "37B activated" (DeepSeek) and "3B"/"22B" (Qwen) are rounded figures: 2% tolerance.
    entry = MODELS[slug]
    breakdown = parameter_breakdown(entry.architecture)
    active = breakdown.active
    if entry.published_active_excludes_embedding:
        active -= breakdown.embedding
    assert active == pytest.approx(entry.published_active_params, rel=0.02)


def test_nineteen_models_and_all_families_parse():
    assert len(MODELS) == 19
    kinds = {m.architecture.model_type for m in MODELS.values()}
    assert kinds == {
        "llama",
        "mistral",
        "qwen2",
        "qwen3",
        "qwen3_moe",
        "mixtral",
        "deepseek_v3",
        "gpt_oss",
    }


def test_deepseek_v3_is_mla_moe_with_fp8_checkpoint():
    arch = MODELS["deepseek-v3"].architecture
    assert arch.is_mla
    assert arch.is_moe
    assert (arch.kv_lora_rank, arch.qk_rope_head_dim, arch.num_dense_layers) == (512, 64, 3)
    assert arch.checkpoint_quantization == "fp8"
    b = parameter_breakdown(arch)
    assert b.num_moe_layers == 58
    assert b.shared_experts_per_layer == 3 * 7168 * 2048


def test_gpt_oss_is_a_hybrid_moe_with_an_mxfp4_checkpoint():
    arch = MODELS["gpt-oss-120b"].architecture
    assert arch.is_moe
    assert (arch.num_experts, arch.experts_per_token) == (128, 4)
    assert arch.checkpoint_quantization == "mxfp4"
    # Sliding-window (128 tokens) and full-attention layers alternate.
    assert arch.layer_windows == (128, 0) * 18
    assert arch.head_dim == 64


def test_qwen3_head_dim_is_explicit():
    arch = MODELS["qwen3-32b"].architecture
    assert arch.head_dim == 128 != arch.hidden_size // arch.num_attention_heads


def test_breakdown_sums_to_total():
    b = parameter_breakdown(MODELS["mixtral-8x7b"].architecture)
    layers = b.num_dense_layers + b.num_moe_layers
    expected = (
        b.embedding
        + b.lm_head
        + b.final_norm
        + layers * (b.attention_per_layer + b.norms_per_layer)
        + b.num_dense_layers * b.dense_mlp_per_layer
        + b.num_moe_layers * (b.experts_per_layer + b.shared_experts_per_layer + b.router_per_layer)
    )
    assert b.total == expected


def test_incomplete_config_lists_missing_keys():
    with pytest.raises(ArchitectureError) as err:
        from_hf_config({"model_type": "qwen3_moe", "hidden_size": 2048, "vocab_size": 10})
    assert set(err.value.missing) >= {"num_hidden_layers", "num_experts", "moe_intermediate_size"}
    assert "num_experts" in str(err.value)


def test_unknown_moe_architecture_is_rejected():
    with pytest.raises(ArchitectureError) as err:
        from_hf_config({"model_type": "fancy_moe", "num_experts": 8, "hidden_size": 8})
    assert "model_type" in err.value.errors


def test_heads_not_divisible_by_kv_heads_is_a_field_error():
    cfg = dict(MODELS["llama-3.1-8b"].config, num_key_value_heads=5)
    with pytest.raises(ArchitectureError) as err:
        from_hf_config(cfg)
    assert "num_key_value_heads" in err.value.errors


@pytest.mark.parametrize(
    ("qc", "expected"),
    [
        ({"quant_method": "awq", "bits": 4}, "int4"),
        ({"quant_method": "gptq", "bits": 8}, "int8"),
        ({"quant_method": "fp8"}, "fp8"),
        (
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"g": {"weights": {"num_bits": 8, "type": "int"}}},
            },
            "int8",
        ),
    ],
)
def test_pre_quantized_checkpoint_method(qc, expected):
    cfg = dict(MODELS["llama-3.1-8b"].config, quantization_config=qc)
    assert from_hf_config(cfg).checkpoint_quantization == expected


def test_gpu_catalog_has_sources_and_capped_nvlink():
    gpus = load_gpus()
    assert len(gpus) == 23
    wanted = {
        "rtx-3090",
        "rtx-4090",
        "rtx-5090",
        "a10",
        "a30",
        "rtx-a5000",
        "a6000",
        "l4",
        "l40s",
        "h20",
        "h800-sxm",
        "b200",
        "mi300x",
        "t4",
    }
    assert wanted <= set(gpus)
    assert all(g.driver_visible_gib < g.memory_gib for g in gpus.values())
    assert all(g.source for g in gpus.values())
    assert gpus["a800-80g-sxm"].nvlink_gbs == 400
    assert gpus["h800-sxm"].nvlink_gbs == 400
    assert gpus["l40s"].nvlink_gbs == 0
    assert gpus["h100-sxm"].driver_visible_gib == pytest.approx(79.2, abs=0.05)
