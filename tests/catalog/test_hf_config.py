"""Any config.json vLLM serves is read, or refused naming the exact key (catalog/hf_config.py)."""

import copy
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.architecture import ArchitectureError, parameter_breakdown
from catalog.hf_config import from_hf_config
from planner.engine.assumptions import Assumptions
from planner.engine.memory import kv_layout, plan_memory
from planner.engine.spec import valid_tp_sizes

CONFIGS = json.loads(
    (Path(__file__).parents[1] / "planner/engine/fixtures/hf_configs.json").read_text()
)["configs"]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_fixture_config_parses(name):
    arch = from_hf_config(CONFIGS[name])
    assert parameter_breakdown(arch).total > 0


def test_gemma3_text_config_defaults_fill_what_the_file_omits():
    # google/gemma-3-4b-it names only 5 text keys: transformers' Gemma3TextConfig fills the rest.
    arch = from_hf_config(CONFIGS["gemma-3-4b"])
    assert (arch.num_attention_heads, arch.num_kv_heads, arch.head_dim) == (8, 4, 256)
    assert arch.vocab_size == 262_208
    assert arch.tie_word_embeddings  # Gemma ties when the key is absent
    assert sum(w == 0 for w in arch.layer_windows) == 5  # every 6th of 34 layers is global
    assert arch.vision_params > 0
    assert arch.mm_tokens_per_item == 256


def test_two_matrix_mlp_and_biases_for_phi2():
    arch = from_hf_config(CONFIGS["phi-2"])
    assert (arch.mlp_matrices, arch.mlp_bias, arch.attention_bias) == (2, True, True)
    assert parameter_breakdown(arch).total == pytest.approx(2.78e9, rel=0.01)


def test_gpt2_names_and_learned_positions():
    arch = from_hf_config(
        {
            "model_type": "gpt2",
            "n_embd": 768,
            "n_layer": 12,
            "n_head": 12,
            "n_inner": None,
            "n_positions": 1024,
            "vocab_size": 50257,
        }
    )
    assert (arch.intermediate_size, arch.position_embeddings) == (3072, 1024)
    assert arch.tie_word_embeddings
    assert parameter_breakdown(arch).total == pytest.approx(124.4e6, rel=0.01)


def test_opt_reads_ffn_dim_and_keeps_two_extra_position_rows():
    arch = from_hf_config(CONFIGS["opt-125m"])
    assert (arch.intermediate_size, arch.mlp_matrices, arch.position_embeddings) == (3072, 2, 2050)
    assert arch.tie_word_embeddings
    assert arch.mlp_bias
    assert arch.attention_bias
    # 125.2M parameters (facebook/opt-125m): 0.2335 GiB in float16 against 0.2389 in the log.
    assert parameter_breakdown(arch).total == pytest.approx(125.2e6, rel=0.002)


@pytest.mark.parametrize(
    ("name", "published"),
    [
        ("pythia-6.9b", 6_857_302_016),  # EleutherAI/pythia-6.9b
        ("gpt-j-6b", 6_053_381_344),  # EleutherAI/gpt-j-6b
        ("bloom-7b1", 7_069_016_064),  # bigscience/bloom-7b1
        ("starcoder", 15.5e9),  # bigcode/starcoder: "15.5B parameters"
        ("falcon-7b", 6.92e9),  # tiiuae/falcon-7b: "6.92B params"
    ],
)
def test_two_matrix_families_count_their_published_parameters(name, published):
    # GPT-NeoX, GPT-J, BLOOM and StarCoder 1 have fc-in/fc-out MLPs: read Llama-like (three
    # matrices) they would come out 33 % heavier in the MLP.
    arch = from_hf_config(CONFIGS[name])
    assert arch.mlp_matrices == 2
    assert parameter_breakdown(arch).total == pytest.approx(published, rel=0.002)


def test_starcoder_multi_query_attention_keeps_one_kv_head():
    assert from_hf_config(CONFIGS["starcoder"]).num_kv_heads == 1


def test_falcon_kv_heads_follow_the_decoder_architecture():
    old = from_hf_config(CONFIGS["falcon-7b"])  # multi-query, one LayerNorm per layer
    assert (old.num_kv_heads, old.norms_per_layer) == (1, 2)
    new = from_hf_config(  # the Falcon-40B shape: 128 heads of 64, 8 KV heads
        {
            **CONFIGS["falcon-7b"],
            "new_decoder_architecture": True,
            "hidden_size": 8192,
            "num_attention_heads": 128,
            "num_kv_heads": 8,
        }
    )
    assert (new.num_kv_heads, new.norms_per_layer) == (8, 4)


def test_qwen2_moe_shared_expert_and_llama4_interleave():
    qwen = from_hf_config(CONFIGS["qwen1.5-moe-a2.7b"])
    assert qwen.shared_expert_width == 5632
    assert parameter_breakdown(qwen).total == pytest.approx(14.3e9, rel=0.01)
    scout = from_hf_config(CONFIGS["llama-4-scout"])
    assert scout.num_moe_layers == 48
    assert scout.window_kind == "chunked"
    maverick = copy.deepcopy(CONFIGS["llama-4-scout"])
    maverick["text_config"].update(num_local_experts=128, interleave_moe_layer_step=2)
    assert from_hf_config(maverick).num_moe_layers == 24


def test_mllama_cross_attention_layers_hold_no_per_token_kv():
    config = {
        "model_type": "mllama",
        "text_config": {
            "model_type": "mllama_text_model",
            "hidden_size": 4096,
            "num_hidden_layers": 40,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "intermediate_size": 14336,
            "vocab_size": 128256,
            "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38],
        },
        "vision_config": {
            "hidden_size": 1280,
            "num_hidden_layers": 32,
            "num_global_layers": 8,
            "intermediate_size": 5120,
            "image_size": 560,
            "patch_size": 14,
            "vision_output_dim": 7680,
        },
    }
    arch = from_hf_config(config)
    layout = kv_layout(arch, 1, 0, arch.num_layers, "auto")
    assert layout.group_size == 32
    assert layout.num_groups == 1
    assert parameter_breakdown(arch).total == pytest.approx(10.6e9, rel=0.02)


def test_fp8_checkpoint_keeps_its_ignore_list_16_bit():
    arch = from_hf_config(CONFIGS["llama-3.1-405b-fp8"])
    scheme = arch.quantization
    assert scheme.weight_dtype == "fp8"
    assert len(scheme.kept_attention_layers) == 126
    assert scheme.kept_mlp_layers == (0, 125)
    gpt_oss = from_hf_config(CONFIGS["gpt-oss-20b"]).quantization
    assert gpt_oss.weight_dtype == "mxfp4"
    assert len(gpt_oss.kept_attention_layers) == 24
    assert not gpt_oss.kept_expert_layers


REFUSALS = [
    (
        {
            "model_type": "llama4",
            "text_config": {
                "model_type": "llama4_text",
                "hidden_size": 5120,
                "num_hidden_layers": 48,
                "num_attention_heads": 40,
                "num_key_value_heads": 8,
                "intermediate_size": 8192,
                "vocab_size": 202048,
            },
        },
        "text_config.num_local_experts",
    ),
    ({"model_type": "mistral3"}, "text_config"),
    (
        {**CONFIGS["llama-3.1-8b"], "quantization_config": {"quant_method": "gptq"}},
        "quantization_config.bits",
    ),
    (
        {**CONFIGS["llama-3.1-8b"], "quantization_config": {"quant_method": "compressed-tensors"}},
        "quantization_config.config_groups",
    ),
    (
        {**CONFIGS["llama-3.1-8b"], "quantization_config": {"quant_method": "hqq"}},
        "quantization_config.quant_method",
    ),
    ({"model_type": "jamba", "hidden_size": 4096}, "model_type"),
    (
        {**CONFIGS["gpt-oss-20b"], "layer_types": ["linear_attention"] * 24},
        "layer_types",
    ),
    ({k: v for k, v in CONFIGS["gpt-oss-20b"].items() if k != "head_dim"}, "head_dim"),
    (
        {
            k: v
            for k, v in CONFIGS["qwen1.5-moe-a2.7b"].items()
            if k != "shared_expert_intermediate_size"
        },
        "shared_expert_intermediate_size",
    ),
    ({**CONFIGS["gemma-2-2b"], "sliding_window": None}, "sliding_window"),
    ({k: v for k, v in CONFIGS["opt-125m"].items() if k != "ffn_dim"}, "ffn_dim"),
    # An unknown family with a non-gated activation: two MLP matrices or three cannot be told.
    ({**CONFIGS["pythia-6.9b"], "model_type": "mpt"}, "model_type"),
    ({**CONFIGS["opt-125m"], "word_embed_proj_dim": 512}, "word_embed_proj_dim"),
]


@pytest.mark.parametrize(("config", "field"), REFUSALS, ids=[f for _, f in REFUSALS])
def test_refusals_name_the_exact_field(config, field):
    with pytest.raises(ArchitectureError) as err:
        from_hf_config(config)
    assert field in err.value.errors
    assert field in str(err.value) or err.value.errors[field] in str(err.value)


_INT_KEYS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "moe_intermediate_size",
    "vocab_size",
    "head_dim",
    "sliding_window",
    "num_local_experts",
    "num_experts",
    "num_experts_per_tok",
)


_VISION_INT_KEYS = ("hidden_size", "depth", "num_hidden_layers", "intermediate_size", "patch_size")
_QUANT_INT_KEYS = ("bits", "group_size", "w_bit", "q_group_size")


def _size(draw):
    return draw(st.one_of(st.none(), st.integers(-4, 70_000), st.sampled_from([1.5, "x", True])))


@st.composite
def mutated_configs(draw):
    config = copy.deepcopy(CONFIGS[draw(st.sampled_from(sorted(CONFIGS)))])
    target = config["text_config"] if isinstance(config.get("text_config"), dict) else config
    for key in draw(st.lists(st.sampled_from(_INT_KEYS), max_size=4, unique=True)):
        target[key] = _size(draw)
    # Vision towers and quantization_config are read too: their sizes can be wrong as well.
    blocks = (("vision_config", _VISION_INT_KEYS), ("quantization_config", _QUANT_INT_KEYS))
    for block, keys in blocks:
        if isinstance(config.get(block), dict):
            for key in draw(st.lists(st.sampled_from(keys), max_size=2, unique=True)):
                config[block][key] = _size(draw)
    if draw(st.booleans()):
        target["num_hidden_layers"] = draw(st.integers(1, 130))
        target.pop("layer_types", None)
        target.pop("no_rope_layers", None)
    return config


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_configs(), st.data())
def test_any_accepted_config_gives_finite_positive_memory(config, data):
    try:
        arch = from_hf_config(config)
    except ArchitectureError as err:
        refusal = err
    else:
        refusal = None
    if refusal is not None:
        assert refusal.errors
        assert all(refusal.errors.values())
        return
    tp = data.draw(st.sampled_from(valid_tp_sizes(arch, 8) or [1]))
    pp = data.draw(st.sampled_from([p for p in (1, 2, 4) if p <= arch.num_layers]))
    dtype = arch.checkpoint_quantization or data.draw(st.sampled_from(["bf16", "fp8", "int4"]))
    # Every profiling era: V0, V1 before 0.11, the full-sort sampler, 0.19, CUDA graphs subtracted.
    version = data.draw(st.sampled_from(["0.6.4", "0.8.5", "0.15.0", "0.19.0", "0.27.1"]))
    mem = plan_memory(
        arch,
        dtype=dtype,
        kv_cache_dtype=data.draw(st.sampled_from(["auto", "fp8"])),
        tp=tp,
        pp=pp,
        visible_gib=79.19,
        gpu_slug="h100-sxm",
        utilization=0.9,
        max_model_len=4096,
        max_num_batched_tokens=None,
        max_num_seqs=None,
        a=Assumptions(),
        vllm_version=version,
    )
    stage = mem.worst
    for value in (stage.weights_bytes, stage.activation_bytes, stage.non_torch_bytes):
        assert math.isfinite(value)
        assert value > 0
    assert math.isfinite(stage.kv_bytes_per_token)
    assert stage.kv_bytes_per_token >= 0
    assert math.isfinite(mem.max_concurrency)
    assert mem.max_concurrency >= 0
    assert mem.kv_tokens >= 0
