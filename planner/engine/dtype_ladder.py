"""The candidates per weight precision: the requested one first, then down the quantization ladder
until one fits.
"""

from __future__ import annotations

from planner.engine.assumptions import Assumptions
from planner.engine.layouts import NodeGroup, enumerate_candidates, score_candidates
from planner.engine.reasons import QUANT_LADDER
from planner.engine.result import Candidate, QuantizationOption
from planner.engine.spec import PlanSpec


def scored_candidates(
    spec: PlanSpec,
    dtype: str,
    a: Assumptions,
    groups: list[NodeGroup],
    only_gpu: str | None = None,
) -> list[Candidate]:
    cands: list[Candidate] = []
    for group in groups:
        if only_gpu is not None and group.gpu_slug != only_gpu:
            continue
        cands += enumerate_candidates(spec, group, dtype=dtype, a=a)
    return score_candidates(spec, cands)


def quantization_option(dtype: str, cands: list[Candidate]) -> QuantizationOption:
    one_node = [c for c in cands if c.nodes_per_replica == 1]
    pick = max(one_node or cands, key=lambda c: (c.fits, c.kv_tokens_per_replica, -c.tp))
    return QuantizationOption(
        weight_dtype=dtype,
        layout=pick.label,
        weights_gib_per_gpu=pick.memory.weights_gib,
        weights_gib_total=pick.memory.weights_gib * pick.gpus_per_replica,
        kv_tokens_per_replica=pick.kv_tokens_per_replica,
        max_concurrency_per_replica=pick.max_concurrency_per_replica,
        fits_one_node=pick.fits,
        serves_load=pick.serves_load,
    )


def candidates_by_dtype(
    spec: PlanSpec, a: Assumptions, groups: list[NodeGroup]
) -> tuple[dict[str, list[Candidate]], str]:
    """Return the candidates per weight dtype tried, and the dtype chosen.

    The requested dtype is tried first; when nothing fits, the quantization ladder is walked
    down until a dtype fits (or the ladder ends: the requested dtype stays chosen).
    """
    requested = spec.weight_dtype
    by_dtype: dict[str, list[Candidate]] = {
        requested: scored_candidates(spec, requested, a, groups)
    }
    if any(c.fits for c in by_dtype[requested]):
        return by_dtype, requested
    for dtype in QUANT_LADDER[requested]:
        by_dtype[dtype] = scored_candidates(spec, dtype, a, groups)
        if any(c.fits for c in by_dtype[dtype]):
            return by_dtype, dtype
    return by_dtype, requested


def fill_quantization_options(
    spec: PlanSpec,
    a: Assumptions,
    groups: list[NodeGroup],
    by_dtype: dict[str, list[Candidate]],
    best: Candidate,
) -> None:
    """Evaluate the ladder's dtypes not tried yet, on the chosen GPU type only (they are shown)."""
    for dtype in QUANT_LADDER[spec.weight_dtype]:
        if dtype not in by_dtype:
            by_dtype[dtype] = scored_candidates(spec, dtype, a, groups, only_gpu=best.gpu)
