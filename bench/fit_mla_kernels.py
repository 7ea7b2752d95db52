"""Fit how fast vLLM's MLA decode kernel reads the latent KV cache, on measured kernel times.

aiconfigurator-core (the optional `aiconfigurator` extra) ships vLLM's MLA block latencies
measured per GPU. Between two contexts at the same batch the block's extra time is its reads of
the extra context, so

    µs per (sequence, context token) pair = (t(b, 8000) − t(b, 2000)) / (b × 6000)

and the efficiency is what the roofline's reads would take (KV bytes per token / reachable HBM)
over that. Prints the pair cost per batch and the efficiency for planner/engine/assumptions.py
(mla_kv_read_efficiency). No benchmark run of ours is used.

Repeat: `.venv/bin/python bench/fit_mla_kernels.py` (needs the aiconfigurator extra; seconds).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.data import load_models  # noqa: E402
from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.memory import kv_bytes_per_token  # noqa: E402
from planner.engine.serving.aiconfigurator import compiled  # noqa: E402
from planner.engine.spec import catalog_gpu  # noqa: E402

SERIES = (("deepseek-r1", "h200-sxm", 8),)
BATCHES = (16, 32, 64, 128, 256)
SHORT, LONG = 2000, 8000


def mla_ms(handle, batch: int, context: int) -> float:
    """Return the measured MLA block time of one decode step, in ms."""
    return sum(op[1] for op in handle.decode_step_per_op(batch, context, 1) if "mla" in op[0])


def main() -> None:
    a = Assumptions()
    shares = []
    for slug, gpu_slug, tp in SERIES:
        model = load_models()[slug]
        handle = compiled(model.config, gpu_slug=gpu_slug, tp=tp, dtype="fp8", kv="bfloat16")
        arch = model.architecture
        kv = kv_bytes_per_token(arch, tp, arch.num_layers, "auto")
        hbm = catalog_gpu(gpu_slug).hbm_bandwidth_gbs * 1e9 / 1e6 * a.hbm_efficiency  # B per µs
        roofline_us = kv / hbm
        for b in BATCHES:
            pair_us = (
                (mla_ms(handle, b, LONG) - mla_ms(handle, b, SHORT)) * 1e3 / (b * (LONG - SHORT))
            )
            shares.append(roofline_us / pair_us)
            print(
                f"{slug} {gpu_slug} TP{tp} batch {b}: {pair_us:.3f} µs per pair "
                f"(reads alone {roofline_us:.4f} µs)"
            )
    print(f"mla_kv_read_efficiency: {statistics.median(shares):.3f}")


if __name__ == "__main__":
    main()
