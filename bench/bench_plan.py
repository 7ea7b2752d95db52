"""Time plan() against 100-machine and the largest accepted inventories; print median ms and
peak MiB.

Targets (issue 4): 1,000 machines ≤ 50 ms, peak memory ≤ 100 MB. A spec holds at most MAX_NODES
(1,024) machines since issue 15's cost limits, so issue 4's 10,000-machine case is refused with
an error naming `hardware.nodes` and is no longer timed.
Run: .venv/bin/python bench/bench_plan.py
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.engine import plan, spec_from_dict  # noqa: E402
from planner.engine.spec.values import MAX_NODES  # noqa: E402

GPUS = [
    ("a800-80g-sxm", 8, "nvlink"),
    ("a100-80g-sxm", 4, "nvlink"),
    ("h100-sxm", 8, "nvswitch"),
    ("l40s", 4, "pcie"),
    ("rtx-4090", 1, "pcie"),
]
SPEEDS = [(25, "ethernet"), (100, "roce"), (200, "infiniband"), (10, "ethernet")]


def inventory(n: int) -> dict[str, object]:
    """Return a spec over n machines of mixed GPU types and links."""
    nodes = []
    for i in range(n):
        gpu, count, link = GPUS[i % len(GPUS)]
        speed, kind = SPEEDS[(i // 7) % len(SPEEDS)]
        nodes.append(
            {
                "hostname": f"gpu-{i:05d}",
                "gpu": gpu,
                "gpu_count": count,
                "intra_link": link,
                "nics": [
                    {"name": "eth0", "speed_gbps": 1, "kind": "ethernet", "role": "management"},
                    {"name": "eth1", "speed_gbps": speed, "kind": kind, "role": "data"},
                ],
            }
        )
    return {
        "model": "llama-3.1-70b",
        "weight_dtype": "fp8",
        "max_model_len": 16384,
        "workload": {"concurrency": 256, "avg_input_tokens": 2000, "avg_output_tokens": 400},
        "hardware": {"pool_kind": "dedicated", "nodes": nodes},
    }


def bench(n: int, repeats: int) -> tuple[float, float, float, float]:
    raw = inventory(n)
    spec = spec_from_dict(raw)
    plan(spec)  # warm caches (catalog load)
    times, cpu, parse = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        s = spec_from_dict(raw)
        t1, c1 = time.perf_counter(), time.process_time()
        plan(s)
        t2, c2 = time.perf_counter(), time.process_time()
        parse.append((t1 - t0) * 1e3)
        times.append((t2 - t1) * 1e3)
        cpu.append((c2 - c1) * 1e3)
    tracemalloc.start()
    plan(spec_from_dict(raw))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (
        statistics.median(times),
        statistics.median(cpu),
        statistics.median(parse),
        peak / 2**20,
    )


def main() -> None:
    for n, target, repeats in ((100, 50, 15), (MAX_NODES, 50, 15)):
        med, cpu, parse, peak = bench(n, repeats)
        print(
            f"plan() on {n:>6} machines: median {med:7.1f} ms wall, {cpu:7.1f} ms CPU "
            f"(target ≤ {target} ms); spec_from_dict {parse:6.1f} ms; "
            f"peak {peak:6.1f} MiB (target ≤ 100 MB)"
        )


if __name__ == "__main__":
    main()
