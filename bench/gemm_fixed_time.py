"""Experiment, not applied: a fixed time per dense GEMM in the serving model, refitted.

bench/tp_slices.py fits aiconfigurator's measured dense GEMMs (one sequence, TP 1-8) on the A100,
H100 and H200 as a fixed time per GEMM plus bytes over a rate; the serving model has one rate per
GPU, which misses thin TP slices (docs/benchmarks.md, "Dense steps at TP 8"). This script puts
that law into the replayed replicas on those GPUs:
- their dense weights stream at the tables' rate (times the weight dtype's read speed);
- each step pays the fixed time for every dense GEMM of the stage: q/k/v and output in every layer,
  gate/up and down where a layer has a dense MLP or shared experts, and a MoE layer's router
  (the tables time gpt-oss-120b's at 5.5 µs a layer at TP 8).

It refits the host constants on the calibration runs with bench/fit_serving.py's search (the HBM
efficiency is held: it now times only the KV and expert reads), then prints the error tables of
the engine as it is and of the experiment, held-out runs and calibration runs.

`--fitted-all-reduce` also gives the experiment the NVLink all-reduce law fitted to the tables
(bench/tp_slices.py's fit_all_reduce) before the host is refitted.

`--with-load-runs` adds the V1 calibration runs of serving_load_runs.json to the fit (Hopper,
asynchronous scheduling), with the API server's admission and the cross-node PP overhead they
were fitted for, and refits the engine alike for the comparison.

Repeat: `.venv/bin/python bench/gemm_fixed_time.py [--with-load-runs] [--fitted-all-reduce]`
(needs the aiconfigurator extra; ~3 min, ~5 with the load runs).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fit_serving import ASSUMED, CAL, assumptions, search  # noqa: E402
from tp_slices import (  # noqa: E402
    AllReduceFit,
    GemmFit,
    fit_all_reduce,
    gemm_rates,
    with_fitted_all_reduce,
)

from catalog.architecture import Architecture, parameter_breakdown  # noqa: E402
from catalog.hf_config import from_hf_config  # noqa: E402
from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.serving.context import ServingContext  # noqa: E402
from planner.engine.serving.host import EngineEra, engine_era  # noqa: E402
from planner.engine.serving.kernels import gpu_generation, kernel_speed  # noqa: E402
from planner.engine.serving.predict import Prediction, predict  # noqa: E402
from planner.engine.serving.replay import (  # noqa: E402
    model_config,
    replay,
    replay_context,
    workload_of,
)
from planner.engine.serving.validation import (  # noqa: E402
    load_runs,
    markdown,
    run_error,
    validation_table,
)
from planner.engine.spec import catalog_gpu  # noqa: E402

FIXTURES = ROOT / "tests/planner/engine/fixtures"
# The tables' GEMM law by catalog GPU slug (tp_slices.GPUS); other GPUs keep the engine's.
FITS: dict[str, GemmFit] = {}
# The NVLink law fitted to the tables' all-reduces (--fitted-all-reduce), else the engine's.
ALL_REDUCE: AllReduceFit | None = None
# Constants the V1 load runs were fitted for (their `fitted`), refitted with them.
LOAD_TERMS = ("frontend_request_ms", "pp_cross_node_step_overhead_ms")


def dense_gemms(arch: Architecture, layers: int) -> float:
    """Return the dense GEMMs one stage of `layers` layers runs per step: q/k/v and output in
    every layer, gate/up and down in a dense MLP or shared experts, the router in a MoE layer."""
    moe_layers = arch.num_moe_layers * layers / max(arch.num_layers, 1)
    shared = parameter_breakdown(arch).shared_experts_per_layer > 0
    mlp_layers = (layers - moe_layers) + (moe_layers if shared else 0.0)
    return 2.0 * layers + 2.0 * mlp_layers + moe_layers


def with_gemm_fixed(ctx: ServingContext, run: Mapping[str, Any]) -> ServingContext:
    """Return the replica of `run` with the tables' GEMM law (unchanged off the fitted GPUs)."""
    fit = FITS.get(run["gpu"])
    if fit is None:
        return ctx
    gpu = catalog_gpu(run["gpu"])
    speed = kernel_speed(run["weight_dtype"], gpu_generation(gpu.slug, gpu.fp8_support))
    arch = from_hf_config(model_config(run))
    fixed_ms = dense_gemms(arch, ctx.layers_per_stage) * fit.fixed_ms
    return dataclasses.replace(
        ctx,
        hbm_bytes_per_ms=fit.bytes_per_ms * speed.memory,
        launch_decode_ms=ctx.launch_decode_ms + fixed_ms,
        launch_mixed_ms=ctx.launch_mixed_ms + fixed_ms,
    )


def replay_gemm_fixed(run: Mapping[str, Any], a: Assumptions | None = None) -> Prediction:
    """Return the prediction for `run` under the experiment."""
    a = a or Assumptions()
    if ALL_REDUCE is not None:
        a = with_fitted_all_reduce(a, ALL_REDUCE)
    ctx = with_gemm_fixed(replay_context(run, a), run)
    return predict(ctx, workload_of(run), scan=False)


def v1_load_calibration_runs() -> list[dict[str, Any]]:
    """Return the calibration runs of serving_load_runs.json on the V1 engine: asynchronous
    scheduling on Hopper, where a GPU floor and host time do not add up the same way."""
    runs = load_runs([FIXTURES / "serving_load_runs.json"])
    return [
        r
        for r in runs
        if r["split"] == "calibration" and engine_era(r["vllm_version"]) == EngineEra.V1
    ]


def main() -> None:
    global ALL_REDUCE
    FITS.update(gemm_rates(show=False))
    if "--fitted-all-reduce" in sys.argv:
        ALL_REDUCE = fit_all_reduce()
        print(f"NVLink all-reduce: {ALL_REDUCE.efficiency:.2f}, {ALL_REDUCE.latency_us:g} µs")
    for gpu, fit in FITS.items():
        print(f"{gpu}: {fit.fixed_ms * 1e3:.1f} µs a GEMM + {fit.bytes_per_ms / 1e9:.2f} TB/s")
    cal, names, engine = CAL, ASSUMED, Assumptions()
    if "--with-load-runs" in sys.argv:
        # Fit on the V1 runs of the load fixture too, with the constants they were fitted for,
        # and refit the engine the same way so that both columns are fitted alike.
        cal, names = CAL + v1_load_calibration_runs(), (*ASSUMED, *LOAD_TERMS)
        engine = assumptions(search(names, replay, cal)[0])
    names = tuple(n for n in names if n != "hbm_efficiency")
    values, _ = search(names, replay_gemm_fixed, cal)
    for name in names:
        print(f"    {name}: {values[name]:.4g} (engine {getattr(engine, name):.4g})")
    a = assumptions(values)
    runs = load_runs([FIXTURES / "serving_runs.json", FIXTURES / "serving_load_runs.json"])
    engine_errors = [run_error(r, replay(r, engine)) for r in runs]
    experiment = [run_error(r, replay_gemm_fixed(r, a)) for r in runs]
    for split in ("validation", "calibration"):
        for label, errors in (("engine", engine_errors), ("fixed time per GEMM", experiment)):
            print(f"\n{split} runs, {label} (mean absolute % error, runs in brackets)\n")
            print(markdown(validation_table(errors, split)))
    print("\nruns that moved by more than 5 points of TPOT or tok/s (engine -> experiment)")
    for old, new in zip(engine_errors, experiment, strict=True):
        moved = [
            f"{key} {100 * before:+.1f} -> {100 * after:+.1f}"
            for key in ("tpot", "tok_s")
            if (before := getattr(old, key)) is not None
            and (after := getattr(new, key)) is not None
            and abs(abs(after) - abs(before)) > 0.05
        ]
        if moved:
            print(f"  {old.split[:3]} {old.run_id:60s} {'  '.join(moved)}")


if __name__ == "__main__":
    main()
