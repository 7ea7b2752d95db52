"""Dense decode steps by TP against aiconfigurator's measured vLLM tables (docs/benchmarks.md,
"Dense steps at TP 8 and the all-reduce").

Prints, from the tables' one-sequence decode pass (`decode_step_per_op`, 1,024 tokens of context)
of the catalog's dense models at TP 1-8 on the A100, H100 and H200:
- the rate the dense GEMMs reach by slice (weights per layer per GPU), and a fit of a fixed time
  per GEMM plus a rate over them;
- the small kernels (norms, activation) and one sequence's attention per layer;
- the custom all-reduce of the tables under CUDA graphs by message size, beside the model's
  `network.all_reduce_ms` over an H100's NVLink, and a fit of the model's NVLink law to every
  vLLM all-reduce table of the SXM GPUs, with the held-out errors it would give;
- three A100 runs at one request in flight: measured, the tables' pass, the model.

Needs the `aiconfigurator` extra. Repeat: `.venv/bin/python bench/tp_slices.py` (about a minute).
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import aiconfigurator_core
import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.architecture import parameter_breakdown  # noqa: E402
from catalog.data import load_gpus, load_models  # noqa: E402
from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.network import all_reduce_ms  # noqa: E402
from planner.engine.serving.aiconfigurator import compiled  # noqa: E402
from planner.engine.serving.replay import replay, replay_context  # noqa: E402
from planner.engine.serving.validation import (  # noqa: E402
    GroupError,
    load_runs,
    run_error,
    validation_table,
)

GPUS = ("a100-80g-sxm", "h100-sxm", "h200-sxm")
DENSE = ("llama-3.1-8b", "qwen3-8b", "qwen2.5-32b", "llama-3.1-70b", "qwen2.5-72b")
GEMMS_PER_LAYER = 4  # qkv, o, gate+up, down
CONTEXT = 1024
AR_TABLE = "systems/data/h100_sxm/comm/vllm/0.24.0/custom_allreduce_perf.parquet"
AR_SIZES = (8_192, 65_536, 524_288, 1_048_576)  # elements
AR_BYTES = 2  # bf16
AR_SYSTEMS = {
    "a100_sxm": "a100-80g-sxm",
    "h100_sxm": "h100-sxm",
    "h200_sxm": "h200-sxm",
    "b200_sxm": "b200",
}
AR_HELD_OUT_ROWS = ("all validation", "hopper", "source never calibrated on")
AR_BANDS = (("< 256 KiB", 0, 2**18), ("256 KiB-16 MiB", 2**18, 2**24), (">= 16 MiB", 2**24, 2**40))
FIXTURES = ROOT / "tests/planner/engine/fixtures"
ONE_REQUEST_A100 = (
    "dl-qwen2.5-7b-tp1-test4-n1-1024x1024",
    "dl-qwen2.5-32b-tp2-test6-n1-1024x1024",
    "dl-qwen2.5-72b-tp2-test8-n1-1024x1024",
)
# An NVLink TP 8 replica on H100s, for the model's all-reduce link.
H100_TP8_RUN = "inferencex828-gpt-oss-120b-h100-tp8-c4-1k1k"


def decode_ops(slug: str, gpu: str, tp: int) -> dict[str, float] | None:
    """Return the tables' one-sequence decode pass per op (ms over all layers), None if refused."""
    try:
        handle = compiled(
            load_models()[slug].config, gpu_slug=gpu, tp=tp, dtype="bf16", kv="bfloat16"
        )
        return {name: ms for name, ms, *_ in handle.decode_step_per_op(1, CONTEXT, 1)}
    except Exception:  # noqa: BLE001 - a shape the library refuses (heads not divisible by TP)
        return None


def dense_layer_bytes(slug: str, tp: int) -> float:
    """Return one layer's bf16 GEMM weights per GPU, in bytes."""
    b = parameter_breakdown(load_models()[slug].architecture)
    return 2.0 * (b.attention_per_layer + b.dense_mlp_per_layer) / tp


@dataclass(frozen=True, slots=True)
class GemmFit:
    """A dense GEMM's time on one GPU as the tables give it: a fixed time plus bytes / rate."""

    fixed_ms: float
    bytes_per_ms: float


def gemm_rates(show: bool = True) -> dict[str, GemmFit]:
    """Return the fit of a fixed time per GEMM plus a rate for each of GPUS (printing the rates
    by slice first when `show`)."""
    fits = {}
    if show:
        print("dense GEMMs, small kernels and attention per layer (one sequence, 1,024 tokens)")
    for gpu in GPUS:
        rows = []
        for slug in DENSE:
            layers = load_models()[slug].architecture.num_layers
            for tp in (1, 2, 4, 8):
                ops = decode_ops(slug, gpu, tp)
                if ops is None:
                    continue
                gemm = sum(v for k, v in ops.items() if k.endswith("_gemm") and "logits" not in k)
                small = sum(ops[k] for k in ops if "norm" in k or "act" in k)
                per_layer = dense_layer_bytes(slug, tp)
                rows.append((layers, per_layer * layers, gemm))
                if not show:
                    continue
                print(
                    f"  {gpu:13s} {slug:14s} TP{tp}  {per_layer / 1e6:6.0f} MB/layer"
                    f"  {per_layer * layers / gemm / 1e9:5.2f} TB/s"
                    f"  small {small / layers * 1e3:4.1f} µs"
                    f"  attention {ops['generation_attention'] / layers * 1e3:4.1f} µs"
                )
        x = np.array([[GEMMS_PER_LAYER * layers, total] for layers, total, _ in rows])
        y = np.array([gemm for *_, gemm in rows])
        (fixed_ms, ms_per_byte), *_ = np.linalg.lstsq(x, y, rcond=None)
        worst = np.max(np.abs(x @ np.array([fixed_ms, ms_per_byte]) / y - 1))
        fits[gpu] = GemmFit(fixed_ms=float(fixed_ms), bytes_per_ms=float(1 / ms_per_byte))
        if show:
            print(
                f"  {gpu}: {fixed_ms * 1e3:.1f} µs a GEMM + {1 / ms_per_byte / 1e9:.2f} TB/s"
                f" (worst {worst:.0%})\n"
            )
    return fits


def all_reduce() -> None:
    # The tables' message_size counts bf16 elements (tokens × hidden), not bytes.
    table = pd.read_parquet(Path(aiconfigurator_core.__file__).parent / AR_TABLE)
    table = table[table.backend == "vllm_graph"]
    link = replay_context(RUNS[H100_TP8_RUN]).tp_link
    print(f"custom all-reduce on H100 (tables, CUDA graphs) against the model ({link.label})")
    for elements in AR_SIZES:
        by_tp = table[table.message_size == elements].set_index("num_gpus").latency
        size = elements * AR_BYTES
        cells = "  ".join(
            f"TP{tp} {by_tp[tp] * 1e3:5.1f} / {all_reduce_ms(size, tp, link) * 1e3:5.1f} µs"
            for tp in (2, 4, 8)
        )
        print(f"  {size / 1024:7.0f} KiB  {cells}")
    print()


@dataclass(frozen=True, slots=True)
class AllReduceFit:
    """The model's NVLink law fitted to the tables: (efficiency, latency µs) and the log errors
    of the rows at the engine's constants and at the fitted ones, with each row's bytes."""

    efficiency: float
    latency_us: float
    bytes: np.ndarray
    log_error_now: np.ndarray
    log_error_fitted: np.ndarray


def fit_all_reduce() -> AllReduceFit:
    """Fit the model's NVLink law (latency + ring × bytes / (efficiency × per-direction
    bandwidth)) to every vLLM custom all-reduce table of the SXM GPUs, 8 KiB to 1 GiB."""
    rows = []
    for system, slug in AR_SYSTEMS.items():
        per_direction = load_gpus()[slug].nvlink_gbs / 2
        for path in (Path(aiconfigurator_core.__file__).parent / "systems/data" / system).glob(
            "comm/vllm/*/custom_allreduce_perf.parquet"
        ):
            t = pd.read_parquet(path)
            t = t[(t.backend == "vllm_graph") & (t.message_size * AR_BYTES >= 8192)]
            rows += [
                (per_direction, n, size * AR_BYTES, ms)
                for n, size, ms in zip(t.num_gpus, t.message_size, t.latency, strict=True)
            ]
    bw, n, size, ms = (np.array(c, dtype=float) for c in zip(*rows, strict=True))

    def log_error(efficiency: float, latency_us: float) -> np.ndarray:
        model = 2 * (n - 1) / n * size / (bw * efficiency * 1e9) * 1e3 + latency_us / 1e3
        return np.log(model / ms)

    a = Assumptions()
    grid = [(e, lat) for e in np.arange(0.30, 0.96, 0.01) for lat in np.arange(2.0, 12.0, 0.25)]
    efficiency, latency_us = min(grid, key=lambda p: float(np.mean(np.abs(log_error(*p)))))
    return AllReduceFit(
        efficiency=float(efficiency),
        latency_us=float(latency_us),
        bytes=size,
        log_error_now=log_error(a.nvlink_efficiency, a.latency_nvlink_us),
        log_error_fitted=log_error(efficiency, latency_us),
    )


def with_fitted_all_reduce(a: Assumptions, fit: AllReduceFit) -> Assumptions:
    """Return `a` with the NVLink law of `fit`."""
    return dataclasses.replace(
        a, nvlink_efficiency=fit.efficiency, latency_nvlink_us=fit.latency_us
    )


def all_reduce_fit() -> None:
    fit, a = fit_all_reduce(), Assumptions()
    rows = len(fit.bytes)
    print(f"the model's NVLink all-reduce against {rows} table rows (A100/H100/H200/B200 SXM)")
    for label, err in (
        (f"now ({a.nvlink_efficiency:.2f}, {a.latency_nvlink_us:g} µs)", fit.log_error_now),
        (f"fitted ({fit.efficiency:.2f}, {fit.latency_us:g} µs)", fit.log_error_fitted),
    ):
        bands = "  ".join(
            f"{name} {np.exp(np.median(err[(fit.bytes >= lo) & (fit.bytes < hi)])):.2f}×"
            for name, lo, hi in AR_BANDS
        )
        print(f"  {label:24s} mean |log| {np.mean(np.abs(err)):.3f}  median model/table: {bands}")
    print("held-out runs with the fitted all-reduce (TPOT / TTFT / tok/s MAE %, nothing refitted)")
    for label, assumed in (("engine", a), ("fitted all-reduce", with_fitted_all_reduce(a, fit))):
        errors = [run_error(r, replay(r, assumed)) for r in RUNS.values()]
        rows = {row.group: row for row in validation_table(errors)}
        print(f"  {label:18s}", "  ".join(_figures(rows[g]) for g in AR_HELD_OUT_ROWS))
    print()


def _figures(row: GroupError) -> str:
    return f"{row.group}: {row.tpot_pct:.1f} / {row.ttft_pct:.1f} / {row.tok_s_pct:.1f}"


def one_request_a100() -> None:
    print("one request in flight on A100s: measured / tables' decode pass / model TPOT (ms)")
    for run_id in ONE_REQUEST_A100:
        run = RUNS[run_id]
        handle = compiled(
            load_models()[run["model_slug"]].config,
            gpu_slug=run["gpu"],
            tp=run["tp"],
            dtype="bf16",
            kv="bfloat16",
        )
        context = run["load"]["input_tokens"] + run["load"]["output_tokens"] // 2
        tables = sum(ms for _, ms, *_ in handle.decode_step_per_op(1, context, 1))
        print(
            f"  {run_id:40s} {run['measured']['tpot_mean_ms']:6.2f} / {tables:6.2f}"
            f" / {replay(run).tpot_mean_ms:6.2f}"
        )


RUNS = {
    r["id"]: r
    for r in load_runs([FIXTURES / "serving_runs.json", FIXTURES / "serving_load_runs.json"])
}

if __name__ == "__main__":
    gemm_rates()
    all_reduce()
    all_reduce_fit()
    one_request_a100()
