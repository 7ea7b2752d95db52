"""CPU time of plan() with the serving model, and of one simulated prediction.

Targets (issue 12): plan() ≤ 100 ms CPU for a two-node spec, ≤ 500 ms for 1,000 machines (the
default roofline step backend). With the optional aiconfigurator extra installed it also times the
two-node spec with `step_backend: aiconfigurator`: the first plan() compiles one engine per TP
size and dtype, later ones reuse them.
Repeat: `.venv/bin/python bench/bench_serving.py`
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_plan import inventory  # noqa: E402

from planner.engine import plan, spec_from_dict  # noqa: E402

TWO_NODES = {
    "model": "qwen2.5-32b",
    "max_model_len": 16384,
    "workload": {"concurrency": 64, "avg_input_tokens": 2000, "avg_output_tokens": 400},
    "hardware": {
        "nodes": [
            {
                "hostname": f"a100-{i}",
                "gpu": "a100-80g-sxm",
                "gpu_count": 4,
                "nics": [{"name": "eth1", "speed_gbps": 25}],
            }
            for i in (1, 2)
        ]
    },
}


def cpu_ms(raw: dict, repeats: int, first: list[float] | None = None) -> float:
    spec = spec_from_dict(raw)
    c0 = time.process_time()
    plan(spec)
    if first is not None:
        first.append((time.process_time() - c0) * 1e3)
    cpu = []
    for _ in range(repeats):
        c0 = time.process_time()
        plan(spec)
        cpu.append((time.process_time() - c0) * 1e3)
    return statistics.median(cpu)


def main() -> None:
    loads = (
        ("closed 64", {}),
        ("poisson 4 req/s", {"arrival": "poisson", "request_rate_per_s": 4.0}),
        ("burst 500", {"arrival": "burst", "burst_size": 500}),
    )
    for label, extra in loads:
        raw = {**TWO_NODES, "workload": {**TWO_NODES["workload"], **extra}}
        print(f"plan() two nodes, {label:<16}: {cpu_ms(raw, 7):7.1f} ms CPU (target ≤ 100 ms)")
    fleet = cpu_ms(inventory(1000), 3)
    print(f"plan() 1,000 machines           : {fleet:7.1f} ms CPU (target ≤ 500 ms)")
    if importlib.util.find_spec("aiconfigurator_core") is None:
        print("aiconfigurator extra not installed: its step backend is not timed")
        return
    cold: list[float] = []
    warm = cpu_ms({**TWO_NODES, "step_backend": "aiconfigurator"}, 3, cold)
    print(f"plan() two nodes, aiconfigurator: {warm:7.1f} ms CPU warm, {cold[0]:.0f} ms first")


if __name__ == "__main__":
    main()
