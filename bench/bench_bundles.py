"""Time building deployment bundles: every candidate × variant of the scenario plans.

Issue 14: every candidate downloads as a bundle, built on request from the plan's input. This
prints milliseconds per bundle (allocation table, clash check, scripts, README) and for a
64-node Route A fleet, where the table and the foreign-name scan grow with the hosts.
Run: .venv/bin/python bench/bench_bundles.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.engine import plan, spec_from_dict  # noqa: E402
from planner.engine.configs.allocation import BundleClash  # noqa: E402
from planner.engine.configs.bundle import build_bundle  # noqa: E402
from planner.engine.configs.layout import BundleLayout, variants  # noqa: E402


def _hardware(n: int, gpus: int, gpu: str, **extra: object) -> dict[str, object]:
    return {
        "nodes": [
            {
                "hostname": f"gpu{i:03d}.dc1.example",
                "address": f"10.0.{i // 200}.{i % 200 + 10}",
                "gpu": gpu,
                "gpu_count": gpus,
                "nics": [{"name": "eth1", "speed_gbps": 100, "kind": "roce"}],
            }
            for i in range(n)
        ],
        **extra,
    }


SCENARIOS = {
    "S1 2×8 A800 70B int8": {
        "model": "llama-3.1-70b",
        "weight_dtype": "int8",
        "workload": {"concurrency": 64},
        "hardware": _hardware(2, 8, "a800-80g-sxm"),
    },
    "S2b 2×4 A100 72B 64K": {
        "model": "qwen2.5-72b",
        "max_model_len": 65536,
        "rope_scaling_factor": 4,
        "workload": {"concurrency": 16},
        "hardware": _hardware(2, 4, "a100-80g-sxm"),
    },
    "Route C 3×8 H100": {
        "model": "qwen3-30b-a3b",
        "workload": {"concurrency": 64, "traffic_shape": "diurnal"},
        "operations": {"ray_in_use": True, "models_change_often": True},
        "hardware": _hardware(3, 8, "h100-sxm"),
    },
    "Route A 64×8 H100 8B": {
        "model": "qwen3-8b",
        "workload": {"concurrency": 20000},
        "hardware": _hardware(64, 8, "h100-sxm"),
    },
}


def main() -> None:
    for name, raw in SCENARIOS.items():
        spec = spec_from_dict(raw)
        result = plan(spec)
        timings_ms: list[float] = []
        refused = 0
        for candidate in (*result.candidates, *((result.pinned,) if result.pinned else ())):
            layout = BundleLayout.from_candidate(candidate)
            for variant in variants(layout):
                started = time.perf_counter()
                try:
                    build_bundle(spec, layout, spec.hardware.nodes, variant)
                except BundleClash:
                    refused += 1
                timings_ms.append((time.perf_counter() - started) * 1000)
        print(
            f"{name}: {len(timings_ms)} bundles ({refused} refused), "
            f"median {statistics.median(timings_ms):.1f} ms, max {max(timings_ms):.1f} ms"
        )


if __name__ == "__main__":
    main()
