"""NCCL all-reduce over PCIe GPUs of one node: the evidence behind network.pcie_ring_link.

Prints NVIDIA's measured NCCL 2.27.3 all-reduce on L40S (aiconfigurator-core's
systems/data/l40s/comm/nccl/2.27.3/nccl_perf.parquet, fp16; the optional `aiconfigurator` extra)
next to the published nccl-tests printouts below, then the medians the defaults follow: bus
bandwidth of large messages over 3+ GPUs (pcie_ring_bandwidth_gbs) and the smallest message's
time at 2, 4 and 8 GPUs (latency_pcie_us + latency_pcie_hop_us per hop).

Repeat: `.venv/bin/python bench/pcie_rings.py`
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import aiconfigurator_core
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.network import pcie_ring_link  # noqa: E402

TABLE = (
    Path(aiconfigurator_core.__file__).parent
    / "systems/data/l40s/comm/nccl/2.27.3/nccl_perf.parquet"
)
LARGE_ELEMENTS = 64 * 2**20  # fp16 elements: 128 MB messages
# Published nccl-tests all_reduce_perf (float) on PCIe-only machines: (source, GPU, GPUs,
# smallest message's time in µs or None, large-message busbw in GB/s or None).
PUBLISHED = (
    ("Anthony-Hoo.github.io AutoDL test (no P2P)", "RTX 2080 Ti", 2, 12.25, 4.0),
    ("kalavai-net/kalavai-client scripts/README.md, docker", "RTX 4090", 2, 8.97, 2.22),
    ("kalavai-net/kalavai-client scripts/README.md, kubernetes", "RTX 4090", 2, 10.98, 3.71),
    ("kalavai-net/kalavai-client scripts/README.md, docker", "RTX 4090", 4, 18.9, 2.57),
    ("tinygrad/open-gpu-kernel-modules#36 (P2P driver)", "RTX 4090", 4, None, 25.72),
    ("NVIDIA/nccl#1639 (issue text)", "RTX 5090", 4, None, 35.0),
    ("NVIDIA/nccl#1639 (issue text)", "RTX 5090", 8, None, 28.0),
    ("NVIDIA/nccl#1530", "RTX 4090", 8, 42.14, None),
    ("NVIDIA/nccl#1439", "RTX 3090", 8, 54.18, None),
)


def l40s_rows() -> list[tuple[str, str, int, float, float]]:
    table = pd.read_parquet(TABLE)
    table = table[(table.op_name == "all_reduce") & (table.nccl_dtype == "half")]
    rows = []
    for n in (2, 4, 8):
        ring = table[table.num_gpus == n]
        small_us = float(ring.nsmallest(1, "message_size").latency.iloc[0]) * 1e3
        large = ring[ring.message_size == LARGE_ELEMENTS].iloc[0]
        busbw = 2 * (n - 1) / n * large.message_size * 2 / (large.latency / 1e3) / 1e9
        rows.append(("aiconfigurator-core l40s nccl 2.27.3", "L40S", n, small_us, busbw))
    return rows


def main() -> None:
    rows = [*l40s_rows(), *PUBLISHED]
    print(f"{'source':<58} {'GPU':<11} {'n':>2} {'small µs':>9} {'busbw GB/s':>11}")
    for source, gpu, n, small, busbw in rows:
        cells = [f"{small:9.1f}" if small else f"{'-':>9}", f"{busbw:11.2f}" if busbw else ""]
        print(f"{source:<58} {gpu:<11} {n:>2} {cells[0]} {cells[1]}")
    ring_bw = [bw for _, _, n, _, bw in rows if n > 2 and bw]
    print(f"\nbusbw over 3+ GPUs: median {statistics.median(ring_bw):.1f} GB/s of {len(ring_bw)}")
    a = Assumptions()
    for n in (2, 4, 8):
        small = [s for _, _, m, s, _ in rows if m == n and s]
        model = pcie_ring_link(n, a)
        print(
            f"{n} GPUs: smallest message median {statistics.median(small):.1f} µs of {len(small)};"
            f" model {model.latency_us:.1f} µs, {model.bandwidth_gbs:g} GB/s"
        )


if __name__ == "__main__":
    main()
