"""Import a model from its Hugging Face config.json (service level)."""

import json
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from catalog import from_hf_config
from catalog.data import load_models
from inventory import services
from inventory.models import ModelSpec
from inventory.selectors import model_spec_architecture
from planner.engine.spec import spec_from_dict
from planner.services.resolve import _model_from_inventory
from tests.inventory.conftest import catalog_config

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("slug", "model_type", "moe", "mla"),
    [
        ("llama-3.1-8b", "llama", False, False),
        ("qwen3-8b", "qwen3", False, False),
        ("qwen3-30b-a3b", "qwen3_moe", True, False),
        ("mixtral-8x7b", "mixtral", True, False),
        ("deepseek-v3", "deepseek_v3", True, True),
    ],
    ids=["llama", "qwen3", "qwen3-moe", "mixtral", "deepseek-v3-mla-moe"],
)
def test_import_real_config_json_computes_the_published_parameters(slug, model_type, moe, mla):
    config = catalog_config(slug)
    published = load_models()[slug].published_total_params

    spec = services.model_spec_import_config(config=json.dumps(config), name=f"My {slug}")

    assert spec.model_type == model_type
    assert (spec.is_moe, spec.is_mla) == (moe, mla)
    assert spec.total_params == pytest.approx(published, rel=0.01)
    assert spec.active_params <= spec.total_params
    assert spec.config_json == config
    assert spec.slug == f"my-{slug}"


def test_import_keeps_qwen3_explicit_head_dim():
    spec = services.model_spec_import_config(config=catalog_config("qwen3-32b"), name="Q")

    assert (spec.hidden_size, spec.num_attention_heads, spec.head_dim) == (5120, 64, 128)


def test_import_reads_deepseek_mla_and_moe_keys():
    spec = services.model_spec_import_config(config=catalog_config("deepseek-v3"), name="DS")

    assert (spec.kv_lora_rank, spec.qk_rope_head_dim, spec.q_lora_rank) == (512, 64, 1536)
    assert (spec.num_experts, spec.experts_per_token, spec.num_shared_experts) == (256, 8, 1)
    assert spec.num_dense_layers == 3


def test_unknown_architecture_lists_what_is_missing():
    config = {"model_type": "mystery", "hidden_size": 1024}

    with pytest.raises(ValidationError) as excinfo:
        services.model_spec_import_config(config=config, name="Mystery")

    message = excinfo.value.message_dict["config"][0]
    assert "'mystery'" in message
    for key in ("num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"):
        assert key in message
    assert not ModelSpec.objects.exists()


def test_moe_config_missing_expert_keys_lists_them():
    config = dict(catalog_config("qwen3-30b-a3b"))
    del config["num_experts"]
    del config["moe_intermediate_size"]

    with pytest.raises(ValidationError) as excinfo:
        services.model_spec_import_config(config=config, name="Broken MoE")

    assert "num_experts, moe_intermediate_size" in excinfo.value.message_dict["config"][0]


@pytest.mark.parametrize(
    "text",
    ['{"model_type": "llama",', "not json at all", "", "[1, 2]"],
    ids=["truncated", "prose", "empty", "array"],
)
def test_config_that_is_not_a_json_object_is_a_field_error(text):
    with pytest.raises(ValidationError) as excinfo:
        services.model_spec_import_config(config=text, name="Bad")

    assert "config.json" in excinfo.value.message_dict["config"][0]


def test_config_with_heads_not_divisible_by_kv_heads_is_refused():
    config = dict(catalog_config("llama-3.1-8b"), num_key_value_heads=5)

    with pytest.raises(ValidationError) as excinfo:
        services.model_spec_import_config(config=config, name="Odd")

    assert "num_key_value_heads" in excinfo.value.message_dict["config"][0]


HF_CONFIGS = json.loads(
    (Path(__file__).parents[1] / "planner/engine/fixtures/hf_configs.json").read_text()
)["configs"]


@pytest.mark.parametrize(
    ("name", "total_params"),
    [
        ("gemma-3-27b", 27.4e9),  # text_config + vision tower, sliding-window layers
        ("llama-4-scout", 108.6e9),  # text_config, chunked attention, interleaved MoE
        ("gpt-oss-20b", 20.9e9),  # MXFP4 experts, attention kept bf16
        ("phi-2", 2.78e9),  # 2-matrix MLP
        ("kimi-vl-a3b", 16.4e9),  # MLA MoE under text_config
    ],
)
def test_import_of_wrapped_and_hybrid_configs_keeps_what_has_no_column(name, total_params):
    spec = services.model_spec_import_config(config=HF_CONFIGS[name], name=f"Imported {name}")

    assert spec.total_params == pytest.approx(total_params, rel=0.01)
    arch = model_spec_architecture(spec)
    assert arch == from_hf_config(HF_CONFIGS[name])
    # The planner receives the whole Architecture, so windows, vision and quantization survive.
    hardware = {"node_count": 1, "gpus_per_node": 8, "gpu": "a100-80g-sxm"}
    engine_model = _model_from_inventory(spec)
    assert "hf_config" not in engine_model
    assert spec_from_dict({"model": engine_model, "hardware": hardware}).architecture == arch


def test_edited_columns_reach_the_engine_with_what_has_no_column():
    spec = services.model_spec_import_config(config=HF_CONFIGS["gemma-3-27b"], name="G3")
    spec.max_position_embeddings = 32768
    hardware = {"node_count": 1, "gpus_per_node": 8, "gpu": "a100-80g-sxm"}

    arch = spec_from_dict(
        {"model": _model_from_inventory(spec), "hardware": hardware, "max_model_len": 4096}
    ).architecture

    original = from_hf_config(HF_CONFIGS["gemma-3-27b"])
    assert arch.max_position_embeddings == 32768  # the edit wins
    assert arch.vision_params == original.vision_params > 0  # the file's vision tower stays
    assert arch.layer_windows == original.layer_windows


def test_an_edited_layer_count_the_file_cannot_carry_reaches_the_engine_as_the_columns():
    """gpt-oss lists one attention kind per layer: with half the layers those windows no longer
    line up, so the per-layer facts are dropped and the columns go as they are."""
    spec = services.model_spec_import_config(config=HF_CONFIGS["gpt-oss-20b"], name="G")
    spec.num_layers = 12
    engine_model = _model_from_inventory(spec)

    assert "hf_config" not in engine_model
    hardware = {"node_count": 1, "gpus_per_node": 8, "gpu": "a100-80g-sxm"}
    arch = spec_from_dict({"model": engine_model, "hardware": hardware}).architecture
    assert arch.num_layers == 12
    assert arch.num_experts == spec.num_experts


def test_a_config_with_state_space_layers_is_refused_by_field():
    with pytest.raises(ValidationError) as err:
        services.model_spec_import_config(
            config={"model_type": "jamba", "hidden_size": 4096}, name="Jamba"
        )
    assert "model_type" in str(err.value)
