"""Each GPU's measured kernel efficiency, the evidence behind planner/engine/serving/efficiency.py.

Reads aiconfigurator-core's measured vLLM tables (the optional `aiconfigurator` extra) and prints,
per GPU: the share of datasheet HBM bandwidth bf16 GEMMs reach while streaming weights (m = 1, 8,
64), the share of dense bf16 TFLOPS they reach on large batches (m = 1024, 2048, 4096), both over
Llama-8B's layer shapes, and the share prompt attention (32/8 heads of 128, causal, one prompt of
8k and 16k tokens) reaches; then each relative to the A100, the factors efficiency.py keeps.

Repeat: `.venv/bin/python bench/kernel_efficiency.py` (PYTHONPATH may point at a separate
install of aiconfigurator-core 0.12).
"""

from __future__ import annotations

import glob
from pathlib import Path

import aiconfigurator_core
import pandas as pd

DATA = Path(aiconfigurator_core.__file__).parent / "systems" / "data"
# system -> (dense bf16 FLOP/s, HBM bytes/s) from the datasheets in catalog/gpus.json
SYSTEMS = {
    "a100_sxm": (312e12, 2.039e12),
    "h100_sxm": (989e12, 3.35e12),
    "h200_sxm": (989e12, 4.8e12),
    "b200_sxm": (2250e12, 8e12),
    "l40s": (362e12, 0.864e12),
}
SHAPES = ((6144, 4096), (4096, 4096), (16384, 4096), (16384, 4096), (4096, 16384))


def _table(system: str, kind: str, name: str) -> pd.DataFrame:
    # the newest vLLM version the system was measured with
    path = sorted(glob.glob(str(DATA / system / kind / "vllm" / "*" / f"{name}.parquet")))[-1]
    return pd.read_parquet(path)


def _gemm_share(gemm: pd.DataFrame, m: int, peak_flops: float, hbm: float) -> tuple[float, float]:
    seconds = flops = weight_bytes = 0.0
    for n, k in SHAPES:
        row = gemm[(gemm.gemm_dtype == "bfloat16") & (gemm.m == m) & (gemm.n == n) & (gemm.k == k)]
        seconds += float(row.latency.iloc[0]) / 1e3
        flops += 2 * m * n * k
        weight_bytes += 2 * n * k
    return weight_bytes / seconds / hbm, flops / seconds / peak_flops


def _attention_share(system: str, peak_flops: float) -> float:
    ctx = _table(system, "attention", "context_attention_perf")
    ctx = ctx[(ctx.num_heads == 32) & (ctx.num_key_value_heads == 8) & (ctx.head_dim == 128)]
    if "window_size" in ctx:
        ctx = ctx[ctx.window_size == 0]  # full attention
    ctx = ctx[ctx.kv_cache_dtype.astype(str).str.contains("bfloat16|float16|auto")]
    shares = []
    for isl in (8192, 16384):
        row = ctx[(ctx.batch_size == 1) & (ctx.isl == isl)]
        flops = 4 * 32 * 128 * isl * isl / 2  # QK^T and PV over the causal half
        shares.append(flops / (float(row.latency.median()) / 1e3) / peak_flops)
    return sum(shares) / len(shares)


def main() -> None:
    measured = {}
    for system, (peak, hbm) in SYSTEMS.items():
        gemm = _table(system, "gemm", "gemm_perf")
        memory = sum(_gemm_share(gemm, m, peak, hbm)[0] for m in (1, 8, 64)) / 3
        compute = sum(_gemm_share(gemm, m, peak, hbm)[1] for m in (1024, 2048, 4096)) / 3
        measured[system] = (memory, compute, _attention_share(system, peak))
    base = measured["a100_sxm"]
    print(f"{'system':<9} weights  GEMMs  attention   relative to A100")
    for system, (memory, compute, attention) in measured.items():
        print(
            f"{system:<9} {memory:6.2f} {compute:6.2f} {attention:8.2f}     "
            f"{memory / base[0]:.2f} {compute / base[1]:.2f} {attention / base[2]:.2f}"
        )


if __name__ == "__main__":
    main()
