"""A pipeline whose stages sit on different nodes waits each step for the executor's round trip."""

from pathlib import Path

import pytest

from planner.engine import plan
from planner.engine.assumptions import DEFAULT_ASSUMPTIONS
from planner.engine.serving.validation import load_runs
from planner.engine.spec import spec_from_dict
from tests.planner.engine.conftest import hardware

RUNS = {
    r["id"]: r for r in load_runs([Path(__file__).parent / "fixtures" / "serving_load_runs.json"])
}


def _pinned(nodes: int, tp: int, pp: int):
    spec = spec_from_dict(
        {
            "model": "qwen2.5-72b",
            "weight_dtype": "fp16",
            "vllm_version": "0.17.0",
            "max_model_len": 2048,
            "workload": {"concurrency": 1, "avg_input_tokens": 57, "avg_output_tokens": 512},
            "hardware": hardware(nodes, 8, "h100-sxm", link=400, kind="infiniband"),
            "pinned_layout": {"tp": tp, "pp": pp, "replicas": 1},
        }
    )
    return plan(spec).pinned


def test_stages_on_two_nodes_pay_the_round_trip_every_step():
    one_node, two_nodes = _pinned(1, 8, 1), _pinned(2, 8, 2)
    assert two_nodes.kind == "cross-node-pp"
    assert two_nodes.serving_context.pp_step_overhead_ms == pytest.approx(
        DEFAULT_ASSUMPTIONS.pp_cross_node_step_overhead_ms
    )
    # The published pair it was fitted on: the same model on one node and on two.
    measured_one = RUNS["jz-qwen2.5-72b-h100-tp8-single-node-c1"]["measured"]["output_tok_s"]
    measured_two = RUNS["jz-qwen2.5-72b-h100-tp8-pp2-two-nodes-c1"]["measured"]["output_tok_s"]
    ratio = one_node.serving.tpot_mean_ms / two_nodes.serving.tpot_mean_ms
    assert ratio == pytest.approx(measured_two / measured_one, rel=0.1)


def test_stages_inside_one_node_pay_no_round_trip():
    inside = _pinned(1, 4, 2)
    assert inside.kind == "intra-node"
    assert inside.serving_context.pp_step_overhead_ms == 0.0


def test_tp_across_two_nodes_of_eight_pays_nccls_hierarchical_all_reduce():
    one_node, tp16 = _pinned(1, 8, 1), _pinned(2, 16, 1)
    assert tp16.kind == "cross-node-tp"
    a = DEFAULT_ASSUMPTIONS
    # A reduce over NVLink on each node, the exchange over InfiniBand, a broadcast back.
    assert tp16.serving_context.tp_link.latency_us == pytest.approx(
        a.latency_infiniband_us + 2 * a.latency_nvlink_us
    )
    # The same post measured TP 16 over the two nodes at 34.3 tok/s, a third of one node's
    # 99.5: whatever the link, half the weights per GPU do not buy the all-reduces back.
    assert tp16.serving.output_tok_s < one_node.serving.output_tok_s


def test_a_measured_per_call_latency_is_the_whole_all_reduce():
    spec = spec_from_dict(
        {
            "model": "qwen2.5-72b",
            "weight_dtype": "fp16",
            "max_model_len": 2048,
            "workload": {"concurrency": 1},
            "hardware": hardware(2, 8, "h100-sxm", link=400, kind="infiniband"),
            "network": {"per_call_latency_us": 90},
            "pinned_layout": {"tp": 16, "pp": 1, "replicas": 1},
        }
    )
    assert plan(spec).pinned.serving_context.tp_link.latency_us == 90
