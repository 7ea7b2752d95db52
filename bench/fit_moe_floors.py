"""Fit the fused-MoE kernels' fixed time per layer by weight format and GPU generation.

bench/fit_moe_kernels.py fitted one fixed time per MoE layer (`moe_layer_fixed_us`, 25 µs) on
the decode passes of bf16 MoE models on the A100, H100 and H200. aiconfigurator-core's measured
vLLM tables show that the floor depends on the kernel behind the weight format and the GPU: at 1
to 64 tokens, where a layer's routed experts take little more than that floor, Hopper's
block-FP8 and MXFP4 experts take ~10 µs a layer more than bf16, and Blackwell's kernels less.

For every catalog MoE model in each format the tables time, on the A100, H100, H200 and B200 at
TP 1-8, this reads the MoE op of the tables' decode pass (`decode_step_per_op`, 1,024 tokens of
context) at 1-64 sequences. It holds the serving model's routed-expert term as it is
(planner/engine/serving/step.py's experts_ms: reads, compute shares, knee) and grid-searches, per
(format, generation), the fixed time per layer that minimises the mean |model / tables − 1|.
Printed as multiples of `moe_layer_fixed_us`, for kernels.py's _MOE_FIXED_SCALE. No benchmark
run of ours is used.

Repeat: `.venv/bin/python bench/fit_moe_floors.py` (needs the aiconfigurator extra; ~10 s).
"""

from __future__ import annotations

import logging
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.data import load_models  # noqa: E402
from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.serving.aiconfigurator import compiled  # noqa: E402
from planner.engine.serving.kernels import gpu_generation, moe_fixed_scale  # noqa: E402
from planner.engine.serving.replay import replay_context  # noqa: E402
from planner.engine.serving.step import experts_ms  # noqa: E402
from planner.engine.spec import catalog_gpu  # noqa: E402

MODELS = {
    "bf16": ("qwen3-30b-a3b", "mixtral-8x7b", "qwen3-235b-a22b"),
    "fp8": ("qwen3-30b-a3b", "mixtral-8x7b", "qwen3-235b-a22b", "deepseek-r1"),
    "mxfp4": ("gpt-oss-20b", "gpt-oss-120b"),
}
GPUS = ("a100-80g-sxm", "h100-sxm", "h200-sxm", "b200")
BATCHES = (1, 2, 4, 8, 16, 32, 64)
CONTEXT = 1024
FIXED_US = range(0, 81)


def replica(slug: str, gpu: str, tp: int, dtype: str) -> dict[str, Any]:
    """Return a published-run-shaped description of one replica, for replay_context."""
    return {
        "id": f"{slug}-{gpu}-tp{tp}-{dtype}",
        "model_slug": slug,
        "gpu": gpu,
        "gpu_count": tp,
        "tp": tp,
        "pp": 1,
        "weight_dtype": dtype,
        "vllm_version": "0.19.0",
        "max_model_len": 8192,
        "max_num_batched_tokens": 8192,
        "max_num_seqs": 256,
        "load": {"arrival": "closed", "concurrency": 1, "input_tokens": 1, "output_tokens": 1},
    }


# (measured MoE ms of the pass, the model's routed-expert ms, MoE layers), per (format, generation)
Points = dict[tuple[str, str], list[tuple[float, float, int]]]


def points() -> Points:
    """Return every decode pass the tables time for the catalog MoE models, by format and
    generation."""
    out: Points = defaultdict(list)
    for dtype, slugs in MODELS.items():
        for slug in slugs:
            model = load_models()[slug]
            for gpu in GPUS:
                generation = gpu_generation(gpu, catalog_gpu(gpu).fp8_support)
                for tp in (1, 2, 4, 8):
                    try:
                        handle = compiled(
                            model.config, gpu_slug=gpu, tp=tp, dtype=dtype, kv="bfloat16"
                        )
                    except Exception:  # noqa: BLE001 - a layout the tables refuse
                        continue
                    ctx = replay_context(replica(slug, gpu, tp, dtype))
                    for batch in BATCHES:
                        ops = handle.decode_step_per_op(batch, CONTEXT, 1)
                        measured = sum(ms for name, ms, *_ in ops if name.endswith("_moe"))
                        if measured > 0:
                            out[(dtype, generation)].append(
                                (
                                    measured,
                                    experts_ms(ctx, batch),
                                    model.architecture.num_moe_layers,
                                )
                            )
    return out


@dataclass(frozen=True, slots=True)
class FloorFit:
    """One (format, generation): the fitted fixed µs per layer and the mean |error| (as a
    fraction) of the passes at `moe_layer_fixed_us`, at the fit and at the engine's value."""

    fixed_us: int
    scale: float  # fixed_us / moe_layer_fixed_us, as kernels.py stores it
    error_at_base: float
    error_fitted: float
    error_engine: float
    points: int


def fit() -> dict[tuple[str, str], FloorFit]:
    """Return the fitted floor of every (format, generation) the tables time."""
    base = Assumptions().moe_layer_fixed_us
    fits = {}
    # The tables warn for every layout they extrapolate; silence them for the fit only (a test
    # calls this, and the rest of its process keeps its logging).
    silenced = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        measured = points()
    finally:
        logging.disable(silenced)
    for (dtype, generation), rows in sorted(measured.items()):

        def error(fixed_us: float, rows=rows) -> float:
            fit = [(experts + layers * fixed_us / 1e3, ms) for ms, experts, layers in rows]
            return sum(abs(model / ms - 1) for model, ms in fit) / len(fit)

        best = min(FIXED_US, key=error)
        fits[(dtype, generation)] = FloorFit(
            fixed_us=best,
            scale=round(best / base, 2),
            error_at_base=error(base),
            error_fitted=error(best),
            error_engine=error(base * moe_fixed_scale(dtype, generation)),
            points=len(rows),
        )
    return fits


def main() -> None:
    base = Assumptions().moe_layer_fixed_us
    print(f"fixed time per MoE layer, 1-{BATCHES[-1]} sequences (moe_layer_fixed_us: {base} µs)")
    for (dtype, generation), f in fit().items():
        print(
            f"  ({dtype!r}, {generation!r}): {f.fixed_us} µs = {f.scale:.2f} ×; mean |error|"
            f" {100 * f.error_at_base:.1f} % at {base:g} µs, {100 * f.error_fitted:.1f} % fitted,"
            f" {100 * f.error_engine:.1f} % at the engine's value ({f.points} points)"
        )


if __name__ == "__main__":
    main()
