"""Pool plans in the situations teams bring (no database)."""

from __future__ import annotations

import pytest

from planner.engine.messages import Code
from planner.engine.pool import plan_pool, pool_spec_from_dict
from planner.engine.result import Route
from planner.engine.spec import SpecError


def _a100_pool(**operations):
    return {
        "hardware": {
            "node_count": 2,
            "gpus_per_node": 8,
            "gpu": "a100-80g-sxm",
            "inter_node_gbps": 100,
            "inter_node_kind": "roce",
            "data_nic": "eth1",
        },
        "operations": operations,
        "models": [
            {
                "name": "chat-70b",
                "model": "llama-3.1-70b",
                "max_model_len": 8192,
                "priority": 8,
                "workload": {"concurrency": 32, "avg_input_tokens": 1024, "avg_output_tokens": 256},
            },
            {
                "name": "router-8b",
                "model": "llama-3.1-8b",
                "max_model_len": 8192,
                "workload": {"concurrency": 32, "avg_input_tokens": 512, "avg_output_tokens": 64},
            },
            {
                "name": "summaries-7b",
                "model": "mistral-7b",
                "priority": 3,
                "max_model_len": 8192,
                "workload": {"concurrency": 16, "traffic_shape": "bursty"},
            },
        ],
    }


def test_70b_8b_7b_on_two_a100_nodes_a_fixed_set_is_route_a_without_ray():
    result = plan_pool(pool_spec_from_dict(_a100_pool()))
    assert {m.name for m in result.placed} == {"chat-70b", "router-8b", "summaries-7b"}
    chat = result.model("chat-70b")
    assert chat is not None
    assert chat.tp in (2, 4, 8)
    assert result.gpus_used + sum(result.spare_gpus.values()) == 16
    assert result.route.route == Route.A
    assert result.route.reasons[0].code == Code.POOL_ROUTE_A
    assert result.first_to_hurt is not None


def test_the_same_pool_whose_models_change_often_and_loads_vary_is_route_c():
    raw = _a100_pool(models_change_often=True)
    raw["models"][1]["workload"]["traffic_shape"] = "diurnal"
    result = plan_pool(pool_spec_from_dict(raw))
    assert result.route.route == Route.C
    codes = [r.code for r in result.route.reasons]
    assert Code.POOL_C_MODELS_CHANGE in codes
    assert Code.POOL_C_MOVE_GPUS in codes
    assert codes[-1] == Code.POOL_ROUTE_C


def test_six_small_models_share_one_8_gpu_l40s_node_one_gpu_each():
    small = ("qwen3-8b", "llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "qwen3-8b", "mistral-7b")
    raw = {
        "hardware": {"nodes": [{"hostname": "l40s-a", "gpu": "l40s", "gpu_count": 8}]},
        "models": [
            {
                "name": f"small-{i}",
                "model": model,
                "max_model_len": 8192,
                "workload": {"concurrency": 4},
            }
            for i, model in enumerate(small)
        ],
    }
    result = plan_pool(pool_spec_from_dict(raw))
    assert len(result.placed) == 6
    assert not result.unplaced
    assert all(m.gpus == 1 for m in result.placed)  # the fewest GPUs that hold each load
    assert result.spare_gpus == {"l40s-a": 2}


def test_a_model_that_fits_no_gpu_of_the_pool_is_named_with_why_and_what_would_place_it():
    raw = {
        "hardware": {"nodes": [{"hostname": "l40s-a", "gpu": "l40s", "gpu_count": 2}]},
        "models": [
            {"name": "big", "model": "qwen2.5-72b", "max_model_len": 32768},
            {"name": "small", "model": "qwen3-8b", "max_model_len": 8192},
        ],
    }
    result = plan_pool(pool_spec_from_dict(raw))
    assert [m.name for m in result.placed] == ["small"]
    (big,) = result.unplaced
    assert big.name == "big"
    assert big.reason.code == Code.POOL_UNPLACED_MEMORY
    assert big.reason.params["tp"] == 2  # 145 GB of bf16 weights on 2 x 48 GB
    assert Code.POOL_HINT_QUANTIZE in {h.code for h in big.hints}  # fp8: 73 GB fits TP2


def test_a_lower_priority_model_yields_when_the_gpus_run_short():
    raw = {
        "hardware": {"nodes": [{"hostname": "h", "gpu": "a100-80g-sxm", "gpu_count": 2}]},
        "models": [
            {"name": "low", "model": "qwen2.5-32b", "priority": 2, "workload": {"concurrency": 1}},
            {"name": "high", "model": "qwen2.5-32b", "priority": 9, "workload": {"concurrency": 1}},
        ],
    }
    result = plan_pool(pool_spec_from_dict(raw))
    placed = [m.name for m in result.placed]
    assert "high" in placed
    if "low" not in placed:
        (low,) = result.unplaced
        assert low.reason.code == Code.POOL_UNPLACED_ROOM


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"models": []}, "models"),
        ({"models": [{"model": "qwen3-8b"}]}, "models"),
        ({"models": [{"model": "qwen3-8b"}, "x"], "hardware": {}}, "models[1]"),
        (
            {
                "models": [{"model": "qwen3-8b", "name": "a"}, {"model": "qwen3-8b", "name": "a"}],
                "hardware": {"nodes": [{"hostname": "h", "gpu": "l40s", "gpu_count": 2}]},
            },
            "models[1].name",
        ),
        ({"models": [{"model": "qwen3-8b", "priority": 11}, {"model": "x"}]}, "models[0].priority"),
        (
            {"models": [{"model": "qwen3-8b", "hardware": {}}, {"model": "qwen3-8b"}]},
            "models[0].hardware",
        ),
        (
            {"models": [{"model": "qwen3-8b", "name": "Bad Name"}, {"model": "mistral-7b"}]},
            "models[0].name",
        ),
    ],
    ids=[
        "empty",
        "one-model",
        "not-an-object",
        "same-name",
        "priority",
        "hardware-per-model",
        "name",
    ],
)
def test_bad_pool_specs_name_the_field(raw, field):
    with pytest.raises(SpecError) as err:
        pool_spec_from_dict(raw)
    assert field in err.value.errors
