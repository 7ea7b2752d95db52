"""Network model: DOMAIN.md §2's worked example and user overrides."""

from planner.engine import plan, spec_from_dict
from planner.engine.assumptions import Assumptions
from planner.engine.messages import Code
from planner.engine.network import all_reduce_ms, domain_example, intra_node_link
from planner.engine.spec import NetworkOverrides, Node, catalog_gpu


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


def _pcie_node(gpus: int) -> Node:
    return Node(hostname="a", gpu=catalog_gpu("l40s"), gpu_count=gpus, intra_link="pcie")


def test_a_pcie_ring_beyond_a_pair_crosses_the_root_complex_and_pays_per_hop():
    # Published nccl-tests over 4-8 PCIe GPUs: busbw median ~15 GB/s, the smallest message
    # ~8 / 18 / 40 µs over 2 / 4 / 8 GPUs (bench/pcie_rings.py).
    a = Assumptions()
    pair, four, eight = (
        intra_node_link(_pcie_node(8), a, NetworkOverrides(), ring=n) for n in (2, 4, 8)
    )
    assert pair.bandwidth_gbs == a.pcie_bandwidth_gbs
    assert four.bandwidth_gbs == eight.bandwidth_gbs == a.pcie_ring_bandwidth_gbs
    assert pair.bandwidth_gbs > four.bandwidth_gbs
    assert pair.latency_us < four.latency_us < eight.latency_us
    assert 5 <= pair.latency_us <= 12
    assert 30 <= eight.latency_us <= 55


def test_nvlink_and_measured_links_do_not_depend_on_the_ring():
    a = Assumptions()
    h100 = Node(hostname="a", gpu=catalog_gpu("h100-sxm"), gpu_count=8, intra_link="nvlink")
    links = {intra_node_link(h100, a, NetworkOverrides(), ring=n) for n in (2, 4, 8)}
    assert len(links) == 1
    measured = NetworkOverrides(intra_node_bandwidth_gbs=9.0, per_call_latency_us=30.0)
    link = intra_node_link(_pcie_node(8), a, measured, ring=8)
    assert (link.bandwidth_gbs, link.latency_us) == (9.0, 30.0)


def test_tp4_on_a_pcie_node_costs_more_per_token_than_on_one_pair_each():
    # A 70B at TP4 on four L40S rings over the root complex; its all-reduce per decode step
    # exceeds what the pair's bandwidth and latency would give.
    a = Assumptions()
    four = intra_node_link(_pcie_node(4), a, NetworkOverrides(), ring=4)
    pair_rate = intra_node_link(_pcie_node(4), a, NetworkOverrides(), ring=2)
    message = 512 * 8192 * 2
    assert all_reduce_ms(message, 4, four) > 1.5 * all_reduce_ms(message, 4, pair_rate)


def _l40s_70b(network=None):
    spec = {
        "model": "llama-3.1-70b",
        "weight_dtype": "fp8",
        "max_model_len": 8192,
        "workload": {"concurrency": 16, "avg_input_tokens": 512, "avg_output_tokens": 256},
        "hardware": {"node_count": 1, "gpus_per_node": 4, "gpu": "l40s"},
    }
    if network:
        spec["network"] = network
    return plan(spec_from_dict(spec))


def test_a_tp_ring_over_pcie_asks_for_the_teams_nccl_tests_figure():
    result = _l40s_70b()
    assert result.recommendation.tp >= 3
    (ring,) = [p for p in result.pitfalls if p.code == Code.PIT_PCIE_TP_RING]
    assert ring.message.params == {"tp": result.recommendation.tp, "bandwidth_gbs": 15.0}
    assert result.network.intra_node.bandwidth_gbs == 15.0  # the summary shows the ring it uses
    # Measured, the figure is the team's own: nothing to ask, and the all-reduce costs less.
    measured = _l40s_70b({"intra_node_bandwidth_gbs": 30.0})
    assert Code.PIT_PCIE_TP_RING not in {p.code for p in measured.pitfalls}
    best = next(c for c in result.candidates if c.id == result.recommendation.candidate_id)
    same = next(c for c in measured.candidates if c.id == best.id)
    assert same.comm_per_decode_step_ms < best.comm_per_decode_step_ms


def test_nvlink_and_pcie_pairs_ask_nothing():
    _, nvlink = _s2a()
    assert Code.PIT_PCIE_TP_RING not in {p.code for p in nvlink.pitfalls}
    pair = {
        "model": "qwen2.5-32b",
        "max_model_len": 8192,
        "workload": {"concurrency": 8, "avg_input_tokens": 512, "avg_output_tokens": 256},
        "hardware": {"node_count": 1, "gpus_per_node": 2, "gpu": "l40s"},
    }
    result = plan(spec_from_dict(pair))
    assert result.recommendation.tp == 2
    assert Code.PIT_PCIE_TP_RING not in {p.code for p in result.pitfalls}
    assert result.network.intra_node.bandwidth_gbs == 25.0
