"""An Architecture sent whole as the spec's inline `model.architecture` arrives whole, and the
engine plans it exactly as it plans the config.json it came from."""

import json
from pathlib import Path

import pytest

from catalog.architecture_json import architecture_to_json
from catalog.data import load_models
from catalog.hf_config import from_hf_config
from planner.engine import plan
from planner.engine.spec import SpecError, spec_from_dict

CONFIGS = json.loads(
    (Path(__file__).parents[1] / "planner/engine/fixtures/hf_configs.json").read_text()
)["configs"]
FP8 = {"method": "fp8", "weight_dtype": "fp8", "bytes_per_param": 1}
HARDWARE = {"node_count": 2, "gpus_per_node": 8, "gpu": "h100-sxm", "inter_node_gbps": 100}


def _config(key):
    entry = CONFIGS[key]
    return entry.get("config", entry)


def _inline(arch, **extra):
    model = {"architecture": {**architecture_to_json(arch), **extra}, "name": "m"}
    return {"model": model, "hardware": HARDWARE, "max_model_len": 512}


ARCHITECTURES = {
    **{f"config:{k}": lambda k=k: from_hf_config(_config(k)) for k in sorted(CONFIGS)},
    **{f"catalog:{k}": lambda k=k: load_models()[k].architecture for k in sorted(load_models())},
}


@pytest.mark.parametrize("key", sorted(ARCHITECTURES))
def test_every_architecture_round_trips_through_the_spec(key):
    arch = ARCHITECTURES[key]()

    assert spec_from_dict(_inline(arch)).architecture == arch


@pytest.mark.parametrize(
    "key", ["llama-3.1-405b-fp8", "gemma-3-27b", "llama-3.2-11b-vision", "gpt-oss-20b"]
)
def test_the_engine_plans_an_inline_architecture_as_its_config(key):
    config = _config(key)
    as_config = spec_from_dict(
        {"model": {"hf_config": config, "name": "m"}, "hardware": HARDWARE, "max_model_len": 512}
    )
    inline = spec_from_dict(_inline(from_hf_config(config)))

    assert plan(inline).to_dict() == plan(as_config).to_dict()


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"layer_windows": [0, 4096]}, "layer_windows"),
        ({"mlp_matrices": 4}, "mlp_matrices"),
        ({"window_kind": "diagonal"}, "window_kind"),
        ({"vision_replicated": "yes"}, "vision_replicated"),
        (
            {"quantization": {"method": "fp8", "weight_dtype": "fp5", "bytes_per_param": 1}},
            "quantization.weight_dtype",
        ),  # fmt: skip
        (
            {
                "quantization": {
                    "method": "fp8",
                    "weight_dtype": "fp8",
                    "bytes_per_param": 1,
                    "kept_mlp_layers": [0, 999],
                }
            },
            "quantization.kept_mlp_layers",
        ),  # fmt: skip
        ({"quantization": "fp8"}, "quantization"),
    ],
)
def test_a_bad_inline_field_is_named(extra, field):
    arch = load_models()["llama-3.1-8b"].architecture

    with pytest.raises(SpecError) as refused:
        spec_from_dict(_inline(arch, **extra))

    assert f"model.architecture.{field}" in refused.value.errors
