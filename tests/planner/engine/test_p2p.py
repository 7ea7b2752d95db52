"""TP on PCIe without peer-to-peer: vLLM runs no custom all-reduce, only NCCL (issue 32)."""

import pytest

from planner.engine.assumptions import GIB
from planner.engine.network import custom_all_reduce_applies, pcie_p2p
from planner.engine.spec import Node, catalog_gpu, spec_from_dict
from tests.planner.engine.startup_logs import cases, predict


def _node(gpu, link="pcie", p2p=None, count=2):
    return Node(hostname="a", gpu=catalog_gpu(gpu), gpu_count=count, intra_link=link, p2p=p2p)


@pytest.mark.parametrize(
    ("gpu", "link", "p2p", "tp", "runs"),
    [
        ("h100-sxm", "nvlink", None, 8, True),
        ("a100-80g-pcie", "pcie", None, 2, True),  # data-centre card: P2P over PCIe
        ("a100-80g-pcie", "pcie", False, 2, False),  # the node says it has none
        ("a100-80g-pcie", "pcie", None, 4, False),  # vLLM: not on more than two PCIe GPUs
        ("rtx-4090", "pcie", None, 2, False),  # GeForce: the driver exposes no P2P
        ("rtx-4090", "pcie", True, 2, True),  # a patched driver, said so
        ("l40s", "pcie", None, 2, False),  # Ada data-centre cards neither
        ("l40s", "nvlink", None, 2, False),  # "nvlink" on a GPU without NVLink is PCIe
        ("t4", "pcie", None, 2, False),  # issue 32's T4 pair ran without peer-to-peer
    ],
)
def test_the_custom_all_reduce_runs_only_with_peer_to_peer(gpu, link, p2p, tp, runs):
    node = _node(gpu, link, p2p, count=max(tp, 2))
    assert custom_all_reduce_applies(node, tp, "intra-node") is runs


def test_a_gpu_the_catalog_does_not_know_is_assumed_without_p2p():
    spec = spec_from_dict(
        {
            "model": "llama-3.1-8b",
            "hardware": {
                "nodes": [
                    {
                        "hostname": "custom",
                        "gpu": {"slug": "custom-16g", "memory_gib": 16, "hbm_bandwidth_gbs": 320},
                        "gpu_count": 2,
                        "intra_link": "pcie",
                    }
                ]
            },
        }
    )
    assert not pcie_p2p(spec.hardware.nodes[0])


def test_p2p_is_read_from_the_node_and_must_be_a_boolean():
    hw = {"nodes": [{"hostname": "a", "gpu": "rtx-4090", "gpu_count": 2, "p2p": True}]}
    assert spec_from_dict({"model": "llama-3.1-8b", "hardware": hw}).hardware.nodes[0].p2p
    from planner.engine.spec import SpecError

    hw["nodes"][0]["p2p"] = "yes"
    with pytest.raises(SpecError) as err:
        spec_from_dict({"model": "llama-3.1-8b", "hardware": hw})
    assert "hardware.nodes[0].p2p" in err.value.errors


def test_two_rtx_4090s_at_tp2_keep_the_kv_memory_vllm_logged():
    # vLLM issue 13061: 8.69 GiB of KV on worker TP1 with 0.25 GiB of non-torch memory.
    case = next(c for c in cases() if c["id"] == "deepseek-r1-distill-qwen-14b-rtx4090-tp2-no-p2p")
    node = _node("rtx-4090")
    mem = predict({**case, "custom_all_reduce": custom_all_reduce_applies(node, 2, "intra-node")})
    assert mem.worst.kv_budget_bytes / GIB == pytest.approx(8.69, rel=0.05)
