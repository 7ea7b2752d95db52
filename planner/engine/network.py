"""Communication cost: ring all-reduce for TP, one activation per stage boundary for PP.

all-reduce time = 2(N−1)/N × message bytes / effective bandwidth + per-call latency
A decode step runs two all-reduces per layer (after attention and after the MLP) on every stage,
each carrying tokens × hidden × activation bytes. The slowest link in the ring sets the pace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from catalog.data import load_gpus
from catalog.generations import gpu_generation
from planner.engine.assumptions import Assumptions
from planner.engine.spec import NetworkOverrides, Node


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """An effective link: bandwidth in GB/s per direction, per-call latency in µs."""

    kind: str
    nominal_gbps: float
    bandwidth_gbs: float
    latency_us: float
    label: str


def intra_node_link(node: Node, a: Assumptions, overrides: NetworkOverrides, ring: int = 2) -> Link:
    """Return the link a ring of `ring` GPUs inside a node runs on (NVLink when the GPU has
    it, else PCIe)."""
    if node.intra_link in ("nvlink", "nvswitch") and node.gpu.nvlink_gbs > 0:
        bw = node.gpu.nvlink_gbs / 2 * a.nvlink_efficiency
        link = Link(
            kind="nvlink",
            nominal_gbps=node.gpu.nvlink_gbs * 8,
            bandwidth_gbs=bw,
            latency_us=a.latency_nvlink_us,
            label=f"NVLink {node.gpu.nvlink_gbs:g} GB/s",
        )
    else:
        link = pcie_ring_link(ring, a)
    return _override(link, overrides.intra_node_bandwidth_gbs, overrides.per_call_latency_us)


def pcie_ring_link(ring: int, a: Assumptions) -> Link:
    """Return the PCIe link of an NCCL ring over `ring` GPUs of one node.

    A pair can share one PCIe switch; a longer ring crosses the CPU's root complex, often both
    sockets, where the bus bandwidth published nccl-tests reach over 4-8 PCIe GPUs spreads from
    1.5 to 35 GB/s (median about 15; docs/benchmarks.md, "PCIe rings"). Each hop adds to the
    per-call time: the smallest message takes about 8, 18 and 40 µs over 2, 4 and 8 GPUs
    (bench/pcie_rings.py prints both).
    """
    hops = max(ring, 2) - 1
    return Link(
        kind="pcie",
        nominal_gbps=a.pcie_bandwidth_gbs * 8,
        bandwidth_gbs=a.pcie_bandwidth_gbs if ring <= 2 else a.pcie_ring_bandwidth_gbs,
        latency_us=a.latency_pcie_us + a.latency_pcie_hop_us * hops,
        label="PCIe",
    )


def _nic_link(speed_gbps: float, kind: str, a: Assumptions) -> Link:
    eff, lat = {
        "infiniband": (a.infiniband_efficiency, a.latency_infiniband_us),
        "roce": (a.roce_efficiency, a.latency_roce_us),
    }.get(kind, (a.ethernet_efficiency, a.latency_ethernet_us))
    return Link(
        kind=kind,
        nominal_gbps=speed_gbps,
        bandwidth_gbs=speed_gbps / 8 * eff,
        latency_us=lat,
        label=f"{speed_gbps:g} Gb/s {kind}",
    )


def nic_key(node: Node) -> tuple[float, str]:
    """Return (speed Gb/s, kind) of the node's fastest data NIC; 1 GbE when it has none."""
    nic = node.data_nic
    return (nic.speed_gbps, nic.kind) if nic else (1.0, "ethernet")


def inter_node_link(
    nodes: Sequence[Node],
    a: Assumptions,
    overrides: NetworkOverrides,
    keys: Sequence[tuple[float, str]] | None = None,
) -> Link:
    """Return the slowest of the nodes' fastest data links (1 GbE when a node has none)."""
    kinds = set(keys) if keys is not None else {nic_key(n) for n in nodes}
    links = [_nic_link(speed, kind, a) for speed, kind in sorted(kinds)]
    slowest = min(links, key=lambda link: link.bandwidth_gbs)
    return _override(slowest, overrides.cross_node_bandwidth_gbs, overrides.per_call_latency_us)


def cross_node_tp_link(inter: Link, intra: Link, gpus_per_node: int) -> Link:
    """Return the link a TP all-reduce over several nodes runs on: the nodes' NICs, with the
    latency of NCCL's hierarchical all-reduce where each node holds several of the GPUs: a
    reduce inside every node, the exchange between nodes, a broadcast back (nccl-tests: ~20 µs
    at 8 B between two A100 nodes with one GPU each over HDR InfiniBand, 46-48 µs between two
    nodes of 8 H20 over NDR)."""
    if gpus_per_node <= 1:
        return inter
    return Link(
        kind=inter.kind,
        nominal_gbps=inter.nominal_gbps,
        bandwidth_gbs=inter.bandwidth_gbs,
        latency_us=inter.latency_us + 2 * intra.latency_us,
        label=inter.label,
    )


def _override(link: Link, bandwidth_gbs: float | None, latency_us: float | None) -> Link:
    if bandwidth_gbs is None and latency_us is None:
        return link
    return Link(
        kind=link.kind,
        nominal_gbps=link.nominal_gbps,
        bandwidth_gbs=bandwidth_gbs if bandwidth_gbs is not None else link.bandwidth_gbs,
        latency_us=latency_us if latency_us is not None else link.latency_us,
        label=link.label + " (measured)",
    )


def all_reduce_ms(message_bytes: float, n: int, link: Link) -> float:
    """Return one ring all-reduce of `message_bytes` over `n` GPUs, in ms."""
    if n <= 1:
        return 0.0
    ring = 2 * (n - 1) / n
    return ring * message_bytes / (link.bandwidth_gbs * 1e9) * 1e3 + link.latency_us / 1e3


def tp_comm_ms(
    *,
    hidden: int,
    layers: int,
    tokens: float,
    tp: int,
    link: Link,
    activation_bytes: float,
    all_reduces_per_layer: int,
) -> float:
    """Return TP all-reduce time for `tokens` tokens through `layers` layers, in ms."""
    if tp <= 1 or tokens <= 0:
        return 0.0
    message = tokens * hidden * activation_bytes
    return layers * all_reduces_per_layer * all_reduce_ms(message, tp, link)


def domain_example(a: Assumptions) -> dict[str, float]:
    """Return DOMAIN.md §2's worked example (hidden 8192, batch 64, 60 layers) in ms."""
    eth = _nic_link(25, "ethernet", a)
    nvl = Link(
        kind="nvlink",
        nominal_gbps=600 * 8,
        bandwidth_gbs=600 / 2 * a.nvlink_efficiency,
        latency_us=a.latency_nvlink_us,
        label="NVLink 600 GB/s",
    )
    nvl_bw_only = Link(
        kind="nvlink",
        nominal_gbps=nvl.nominal_gbps,
        bandwidth_gbs=nvl.bandwidth_gbs,
        latency_us=0.0,
        label=nvl.label,
    )

    def per_step_ms(tp: int, link: Link) -> float:
        return tp_comm_ms(
            hidden=8192,
            layers=60,
            tokens=64,
            tp=tp,
            link=link,
            activation_bytes=a.activation_bytes,
            all_reduces_per_layer=a.all_reduces_per_layer,
        )

    return {
        "tp16_25gbe_ms": per_step_ms(16, eth),
        "tp8_nvlink_ms": per_step_ms(8, nvl),
        "tp8_nvlink_bandwidth_only_ms": per_step_ms(8, nvl_bw_only),
    }


def custom_all_reduce_applies(node: Node, tp: int, kind: str) -> bool:
    """Return whether vLLM's custom all-reduce (and its ~1.8 GiB of buffers) runs for this TP.

    It needs every TP rank in one node with peer-to-peer access: NVLink/NVSwitch, or two GPUs
    on PCIe whose P2P test passes (vLLM turns it off otherwise, "platform lacks GPU P2P
    capability"); across nodes only NCCL runs.
    """
    if tp < 2 or kind == "cross-node-tp":
        return False
    if node.intra_link in ("nvlink", "nvswitch") and node.gpu.nvlink_gbs > 0:
        return True
    return tp <= 2 and pcie_p2p(node)


def pcie_p2p(node: Node) -> bool:
    """Return whether the node's GPUs reach each other peer-to-peer over PCIe.

    As the input says, else: not on GeForce and RTX cards (the driver does not expose P2P: two
    RTX 4090s log 0.25 GiB of non-torch memory at TP 2, vLLM issue 13061), nor on Ada
    data-centre cards (L4, L20, L40S), nor on T4s (issue 32's pair), nor on a GPU the catalog
    does not know, for which there is no evidence of it; on the other data-centre cards, yes.
    """
    if node.p2p is not None:
        return node.p2p
    slug = node.gpu.slug
    if slug not in load_gpus() or slug.startswith("rtx-"):
        return False
    return gpu_generation(slug, node.gpu.fp8_support) not in ("ada", "turing")
