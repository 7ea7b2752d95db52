"""Time a pool plan: 8 models on 64 GPUs (8 nodes of 8 H100), and its placement alone.

Target (issue 31): the placement of 8 models on 64 GPUs in <= 2 s. Printed: median and worst of
5 runs of the integer program (solve.place) and of the whole plan_pool (options, placement,
the serving simulation of every placed model, GPU indices), without and with GPU sharing
(share_gpus: one more integer per node and a shared option per small model).
Run: .venv/bin/python bench/bench_pool_placement.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.engine.assumptions import DEFAULT_ASSUMPTIONS  # noqa: E402
from planner.engine.layouts import group_nodes  # noqa: E402
from planner.engine.pool import plan_pool, pool_spec_from_dict  # noqa: E402
from planner.engine.pool.options import model_options  # noqa: E402
from planner.engine.pool.solve import place  # noqa: E402

MODELS = [
    ("llama-3.1-70b", 64, 9),
    ("qwen2.5-72b", 32, 8),
    ("qwen3-30b-a3b", 64, 7),
    ("qwen2.5-32b", 32, 6),
    ("llama-3.1-8b", 128, 5),
    ("qwen3-8b", 64, 4),
    ("mistral-7b", 32, 3),
    ("qwen2.5-7b", 16, 2),
]
RUNS = 5


def spec(*, share_gpus: bool = False) -> dict[str, object]:
    nodes = [
        {"hostname": f"h100-{i}", "gpu": "h100-sxm", "gpu_count": 8, "intra_link": "nvswitch"}
        for i in range(8)
    ]
    models = [
        {
            "name": f"m{i}-{model.replace('.', '-')}",
            "model": model,
            "max_model_len": 8192,
            "priority": priority,
            "workload": {
                "concurrency": concurrency,
                "avg_input_tokens": 1024,
                "avg_output_tokens": 256,
                "ttft_slo_ms": 2000,
                "itl_slo_ms": 50,
            },
        }
        for i, (model, concurrency, priority) in enumerate(MODELS)
    ]
    return {"hardware": {"nodes": nodes}, "models": models, "share_gpus": share_gpus}


def _timed(fn) -> list[float]:  # noqa: ANN001
    times = []
    for _ in range(RUNS):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return times


def main() -> None:
    for share_gpus in (False, True):
        print(f"== share_gpus={share_gpus}")
        _bench(share_gpus)


def _bench(share_gpus: bool) -> None:
    pool = pool_spec_from_dict(spec(share_gpus=share_gpus))
    groups = group_nodes(pool.hardware.nodes)
    options = [
        o
        for m in pool.models
        for o in model_options(m.name, m.spec, groups, DEFAULT_ASSUMPTIONS, share_gpus=share_gpus)[
            0
        ]
    ]
    priorities = {m.name: m.priority for m in pool.models}
    solve = _timed(lambda: place(options, priorities, pool.hardware.nodes))
    whole = _timed(lambda: plan_pool(pool))
    result = plan_pool(pool)
    print(f"pool: {len(pool.models)} models, 64 GPUs, {len(options)} options")
    print(
        f"placement (integer program): median {statistics.median(solve) * 1e3:.1f} ms CPU, "
        f"worst {max(solve) * 1e3:.1f} ms (target <= 2000 ms)"
    )
    print(
        f"whole plan_pool: median {statistics.median(whole) * 1e3:.0f} ms CPU, "
        f"worst {max(whole) * 1e3:.0f} ms"
    )
    print(
        f"placed {len(result.placed)}, unplaced {len(result.unplaced)}, "
        f"GPUs used {result.gpus_used}, optimal {result.optimal}, route {result.route.route}"
    )


if __name__ == "__main__":
    main()
