"""Fit the roofline's routed-expert constants on NVIDIA's measured vLLM fused-MoE kernel times.

aiconfigurator-core (the optional `aiconfigurator` extra) ships fused-MoE latencies measured with
vLLM per GPU. For a few (model, GPU, TP) series at decode batch 1-64 this reads the MoE ops of a
whole decode pass and grid-searches the three constants of planner/engine/serving/step.py's
expert term:

    moe ms = layers × moe_layer_fixed_us
           + expert bytes × touched share / (HBM × hbm_efficiency × moe_hbm_efficiency)
    touched share = 1 − (1 − top_k / experts) ** (moe_routing_token_share × tokens)

minimising the mean |fit / measured − 1|. Prints the constants for planner/engine/assumptions.py
and the fit per point. No benchmark run of ours is used.

Repeat: `.venv/bin/python bench/fit_moe_kernels.py` (needs the aiconfigurator extra; ~1 min).
"""

from __future__ import annotations

import itertools
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from catalog.architecture import parameter_breakdown  # noqa: E402
from catalog.data import load_models  # noqa: E402
from planner.engine.assumptions import Assumptions  # noqa: E402
from planner.engine.serving.aiconfigurator import compiled  # noqa: E402
from planner.engine.spec import catalog_gpu  # noqa: E402

SERIES = (
    ("qwen3-30b-a3b", "h100-sxm", 1),
    ("qwen3-30b-a3b", "a100-80g-sxm", 1),
    ("qwen3-30b-a3b", "h200-sxm", 1),
    ("mixtral-8x7b", "h100-sxm", 1),
    ("mixtral-8x7b", "a100-80g-sxm", 2),
    ("qwen3-235b-a22b", "h200-sxm", 4),
)
BATCHES = (1, 2, 4, 8, 16, 32, 64)


def points() -> list[tuple[str, int, float, float, float, float, int]]:
    """Return (label, batch, measured ms, expert bytes, reachable HBM B/ms, top-k share, layers)."""
    out = []
    hbm_eff = Assumptions().hbm_efficiency
    for slug, gpu_slug, tp in SERIES:
        model = load_models()[slug]
        arch = model.architecture
        handle = compiled(model.config, gpu_slug=gpu_slug, tp=tp, dtype="bf16", kv="bfloat16")
        expert_bytes = parameter_breakdown(arch).experts_per_layer * 2 / tp * arch.num_moe_layers
        hbm = catalog_gpu(gpu_slug).hbm_bandwidth_gbs * 1e9 / 1e3 * hbm_eff
        share = arch.experts_per_token / arch.num_experts
        for b in BATCHES:
            ms = sum(o[1] for o in handle.decode_step_per_op(b, 1024, 1) if "moe" in o[0])
            label = f"{slug} {gpu_slug} TP{tp}"
            out.append((label, b, ms, expert_bytes, hbm, share, arch.num_moe_layers))
    return out


def fit_ms(p, eff: float, spread: float, fixed_us: float) -> float:
    _, b, _, expert_bytes, hbm, share, layers = p
    touched = 1 - (1 - share) ** (spread * b)
    return layers * fixed_us / 1e3 + expert_bytes * touched / (hbm * eff)


def main() -> None:
    logging.disable(logging.WARNING)
    pts = points()
    grid = itertools.product(
        [x / 100 for x in range(60, 131, 5)],
        [x / 100 for x in range(20, 101, 5)],
        range(0, 45, 5),
    )
    best = min(
        grid,
        key=lambda g: sum(abs(fit_ms(p, *g) / p[2] - 1) for p in pts) / len(pts),
    )
    err = sum(abs(fit_ms(p, *best) / p[2] - 1) for p in pts) / len(pts)
    eff, spread, fixed = best
    print(
        f"moe_hbm_efficiency: {eff}\nmoe_routing_token_share: {spread}\nmoe_layer_fixed_us: {fixed}"
    )
    print(f"mean |error| on {len(pts)} measured points: {100 * err:.1f} %")
    for p in pts:
        print(f"  {p[0]:<32} b={p[1]:3d} measured {p[2]:7.2f} ms  fit {fit_ms(p, *best):7.2f} ms")


if __name__ == "__main__":
    main()
