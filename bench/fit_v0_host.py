"""Fit the V0 engine's host constants (vLLM < 0.8) on the calibration runs of the V0 eras.

Each era's constants are fitted on its own calibration runs in
tests/planner/engine/fixtures/serving_load_runs.json, by grid search minimising the mean
|log(predicted / measured)| of TPOT (mean, or median where only that was published) and output
tok/s; validation runs are never read here. In order:

1. before 0.6 (API server on the engine's thread): the fixed and per-sequence work per step,
   on a light and a heavy burst of one source (a light load pins the fixed part, a heavy one the
   part per sequence);
2. 0.6 to 0.7: the fixed and per-sequence work on one GPU, on a single request (Qwen's speed
   benchmark, which pins the fixed part) and a heavy burst;
3. both V0 eras: the extra work of a replica on several GPUs, fixed and per running sequence,
   on a single request at TP 4 and a heavy TP 4 burst.

Prints the constants to put in planner/engine/assumptions.py and each calibration run's errors.
Repeat: `.venv/bin/python bench/fit_v0_host.py` (about two minutes of CPU).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.serving.host import EngineEra, engine_era  # noqa: E402
from planner.engine.serving.replay import replay  # noqa: E402
from planner.engine.serving.validation import load_runs  # noqa: E402

RUNS = load_runs([ROOT / "tests/planner/engine/fixtures/serving_load_runs.json"])
CAL = [
    r for r in RUNS if r["split"] == "calibration" and engine_era(r["vllm_version"]) != EngineEra.V1
]


def _errors(run, a: Assumptions) -> list[float]:
    """Return the log errors of `run` under `a` (TPOT where published, output tok/s)."""
    p, m = replay(run, a), run["measured"]
    out = [math.log(p.output_tok_s / m["output_tok_s"])]
    if m.get("tpot_mean_ms"):
        out.append(math.log(p.tpot_mean_ms / m["tpot_mean_ms"]))
    elif m.get("tpot_median_ms"):
        out.append(math.log(p.tpot_p50_ms / m["tpot_median_ms"]))
    return out


def _fit(a: Assumptions, runs, grid: dict[str, list[float]]) -> Assumptions:
    """Return `a` with the grid point of least mean |log error| over `runs`."""
    best, best_a = math.inf, a
    for values in itertools.product(*grid.values()):
        trial = dataclasses.replace(a, **dict(zip(grid, values, strict=True)))
        errs = [abs(e) for run in runs for e in _errors(run, trial)]
        loss = sum(errs) / len(errs)
        if loss < best:
            best, best_a = loss, trial
    return best_a


def main() -> None:
    in_process = [r for r in CAL if engine_era(r["vllm_version"]) == EngineEra.V0_IN_PROCESS]
    v0 = [r for r in CAL if engine_era(r["vllm_version"]) == EngineEra.V0]
    one_gpu = [r for r in v0 if r["tp"] * r.get("pp", 1) == 1]
    several = [r for r in v0 if r["tp"] * r.get("pp", 1) > 1]
    a = Assumptions()
    a = _fit(
        a,
        [r for r in in_process if r["tp"] == 1],
        {
            "v0_in_process_step_overhead_ms": [1.0, 2.0, 3.0, 4.0, 5.0],
            "v0_in_process_per_seq_overhead_ms": [0.12, 0.14, 0.16, 0.18, 0.20, 0.22, 0.25],
        },
    )
    a = _fit(
        a,
        one_gpu,
        {
            "v0_step_overhead_ms": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0],
            "v0_per_seq_overhead_ms": [0.08, 0.10, 0.12, 0.14, 0.16, 0.18],
        },
    )
    a = _fit(
        a,
        several,
        {
            "v0_multi_gpu_step_overhead_ms": [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0],
            "v0_multi_gpu_per_seq_overhead_ms": [0.0, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12],
        },
    )
    for name in (
        "v0_in_process_step_overhead_ms",
        "v0_in_process_per_seq_overhead_ms",
        "v0_step_overhead_ms",
        "v0_per_seq_overhead_ms",
        "v0_multi_gpu_step_overhead_ms",
        "v0_multi_gpu_per_seq_overhead_ms",
    ):
        print(f"    {name}: {getattr(a, name):.4g}")
    for run in CAL:
        errs = ", ".join(f"{100 * (math.exp(e) - 1):+.0f} %" for e in _errors(run, a))
        print(f"{run['id']}: tok/s, TPOT {errs}")


if __name__ == "__main__":
    main()
