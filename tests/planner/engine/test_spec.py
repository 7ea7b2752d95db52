"""Bad specs raise SpecError with field paths and allowed ranges."""

import pytest

from planner.engine import SpecError, spec_from_dict
from tests.planner.engine.conftest import hardware


def _base(**over):
    spec = {"model": "qwen2.5-32b", "hardware": hardware(2, 4, "a100-80g-sxm")}
    spec.update(over)
    return spec


def _errors(spec):
    with pytest.raises(SpecError) as err:
        spec_from_dict(spec)
    return err.value.errors


def test_tp_not_dividing_heads():
    errors = _errors(_base(pinned_layout={"tp": 3, "pp": 1, "replicas": 1}))
    assert "40 attention heads" in errors["pinned_layout.tp"]


def test_zero_gpus():
    spec = _base(hardware={"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 0}]})
    assert "between 1 and 64" in _errors(spec)["hardware.nodes[0].gpu_count"]


@pytest.mark.parametrize("util", [0, -0.1, 1.2, "high"])
def test_utilization_outside_range(util):
    assert "(0.0, 1.0]" in _errors(_base(gpu_memory_utilization=util))["gpu_memory_utilization"]


def test_max_model_len_above_model_limit():
    assert "32768" in _errors(_base(max_model_len=65536))["max_model_len"]


def test_unknown_slugs():
    errors = _errors(_base(model="gpt-9", hardware=hardware(1, 1, "tpu-v9")))
    assert "unknown model slug" in errors["model.slug"]
    assert "unknown GPU slug" in errors["hardware.nodes[0].gpu.slug"]


def test_several_errors_at_once_and_duplicate_hostnames():
    spec = _base(
        weight_dtype="int3",
        workload={"concurrency": 0, "traffic_shape": "weekly"},
        hardware={
            "nodes": [
                {"hostname": "a", "gpu": "h100-sxm", "gpu_count": 8},
                {
                    "hostname": "a",
                    "gpu": "h100-sxm",
                    "gpu_count": 8,
                    "nics": [{"name": "eth1", "speed_gbps": 0}],
                },
            ]
        },
    )
    errors = _errors(spec)
    assert {
        "weight_dtype",
        "workload.concurrency",
        "workload.traffic_shape",
        "hardware.nodes[1].hostname",
        "hardware.nodes[1].nics[0].speed_gbps",
    } <= set(errors)


def test_pinned_layout_larger_than_hardware():
    errors = _errors(_base(pinned_layout={"tp": 8, "pp": 2, "replicas": 1}))
    assert "needs 16 GPUs" in errors["pinned_layout"]


def test_inline_hf_config_with_missing_keys():
    errors = _errors(_base(model={"hf_config": {"model_type": "llama", "hidden_size": 4096}}))
    assert "model.hf_config.num_hidden_layers" in errors


def test_valid_inline_config_and_gpu_figures():
    spec = spec_from_dict(
        {
            "model": {
                "hf_config": {
                    "model_type": "llama",
                    "hidden_size": 2048,
                    "num_hidden_layers": 16,
                    "num_attention_heads": 16,
                    "num_key_value_heads": 4,
                    "intermediate_size": 8192,
                    "vocab_size": 32000,
                },
                "hf_repo": "acme/tiny",
            },
            "hardware": {
                "nodes": [
                    {
                        "hostname": "x",
                        "gpu_count": 2,
                        "gpu": {"memory_gib": 32, "hbm_bandwidth_gbs": 900},
                    }
                ]
            },
        }
    )
    assert spec.hardware.nodes[0].gpu.driver_visible_gib == pytest.approx(31.68)
    assert spec.architecture.num_kv_heads == 4


def test_inline_architecture_by_field_names():
    arch = {
        "hidden_size": 4096,
        "num_layers": 32,
        "num_attention_heads": 32,
        "num_kv_heads": 8,
        "head_dim": 128,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
    }
    spec = spec_from_dict(_base(model={"architecture": arch, "name": "my-8b"}))
    assert spec.architecture.num_kv_heads == 8
    assert spec.model_name == "my-8b"
    bad = dict(arch, num_kv_heads=5)
    assert "model.architecture.num_kv_heads" in _errors(_base(model={"architecture": bad}))
    del bad["vocab_size"]
    assert "model.architecture.vocab_size" in _errors(_base(model={"architecture": bad}))


def test_config_json_under_architecture_still_parses():
    from catalog.data import load_models

    cfg = load_models()["qwen3-8b"].config
    spec = spec_from_dict(_base(model={"architecture": cfg}))
    assert spec.architecture.head_dim == 128


def test_vllm_version_defaults_to_the_configs_target_and_is_validated():
    from planner.engine.vllm_flags import VLLM_VERSION

    base = {
        "model": "llama-3.1-8b",
        "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 1}]},
    }
    assert spec_from_dict(base).vllm_version == VLLM_VERSION
    assert spec_from_dict({**base, "vllm_version": "0.10.1"}).vllm_version == "0.10.1"
    with pytest.raises(SpecError) as err:
        spec_from_dict({**base, "vllm_version": "latest"})
    assert "vllm_version" in err.value.errors


@pytest.mark.parametrize(
    "hostile",
    [
        "0.1." + "a" * 30 + "!",  # the old pattern backtracked for minutes on this
        "0.19.0" + "-rc" * 30,  # a well-formed release past the length limit
    ],
)
def test_a_hostile_vllm_version_is_refused_naming_the_field(hostile):
    base = {
        "model": "llama-3.1-8b",
        "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 1}]},
    }
    with pytest.raises(SpecError) as err:
        spec_from_dict({**base, "vllm_version": hostile})
    assert "vllm_version" in err.value.errors


def test_mxfp4_needs_an_mxfp4_checkpoint_and_fp32_is_accepted():
    base = {
        "model": "llama-3.1-8b",
        "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 1}]},
    }
    with pytest.raises(SpecError) as err:
        spec_from_dict({**base, "weight_dtype": "mxfp4"})
    assert "quantization_config.quant_method" in err.value.errors["weight_dtype"]
    assert spec_from_dict({**base, "weight_dtype": "fp32"}).weight_dtype == "fp32"
