"""Network model: DOMAIN.md §2's worked example and user overrides."""

from planner.engine import plan, spec_from_dict
from planner.engine.assumptions import Assumptions
from planner.engine.network import domain_example


def test_domain_example_order_of_magnitude():
    ex = domain_example(Assumptions())
    assert 80 <= ex["tp16_25gbe_ms"] <= 200  # DOMAIN §2: ≈ 120 ms
    assert ex["tp8_nvlink_bandwidth_only_ms"] < 1.0  # DOMAIN §2: < 1 ms on NVLink
    assert ex["tp8_nvlink_ms"] < 3.0  # plus 120 calls of per-call latency
    assert ex["tp16_25gbe_ms"] > 50 * ex["tp8_nvlink_ms"]


def _s2a(network=None):
    spec = {
        "model": "qwen2.5-32b",
        "max_model_len": 8192,
        "workload": {"concurrency": 32, "avg_input_tokens": 1200, "avg_output_tokens": 512},
        "hardware": {
            "node_count": 2,
            "gpus_per_node": 4,
            "gpu": "a100-80g-sxm",
            "inter_node_gbps": 25,
        },
    }
    if network:
        spec["network"] = network
    result = plan(spec_from_dict(spec))
    return next(c for c in result.candidates if c.kind == "cross-node-tp"), result


def test_measured_bandwidth_latency_and_overlap_change_the_estimate():
    default, _ = _s2a()
    faster, result = _s2a({"cross_node_bandwidth_gbs": 10.0, "per_call_latency_us": 20})
    assert faster.comm_per_decode_step_ms < default.comm_per_decode_step_ms / 3
    overlapped, result = _s2a({"overlap_factor": 0.5})
    assert overlapped.decode_step_ms < default.decode_step_ms
    assert result.assumptions["overlap_factor"] == 0.5
    assert "(measured)" in faster.tp_link
