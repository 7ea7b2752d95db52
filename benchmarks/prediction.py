"""The plan's prediction for the workload a run measured, beside the measurement.

For each level, the plan's recommended layout goes through the serving model again with the
run's arrival shape, its load (requests in flight, or the request rate) and the request lengths
the server actually counted; the prediction's own uncertainty band (the calibration residuals of
its regime) says whether the measurement falls inside it. A sweep also gets both knees: the
fewest requests in flight that reach 90% of the curve's highest output throughput.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from benchmarks.config import RunConfig
from planner.engine.layouts import evaluate, group_nodes, spec_assumptions
from planner.engine.serving import predict
from planner.engine.serving.bands import band_for
from planner.engine.serving_choice import serving_regime
from planner.engine.spec import Layout
from planner.models import Plan
from planner.selectors.plan_values import (
    PlanUnreadable,
    plan_assumptions,
    plan_spec,
    plan_values,
)

KNEE_SHARE = 0.9
QUANTITIES = (
    # name, predicted p50 and band keys, measured key in the summary
    ("ttft_ms", "ttft_p50_ms", "ttft_p50_low_ms", "ttft_p50_high_ms", ("ttft", "median_ms")),
    ("tpot_ms", "tpot_p50_ms", "tpot_p50_low_ms", "tpot_p50_high_ms", ("tpot", "median_ms")),
    ("output_tok_s", "output_tok_s", "output_low_tok_s", "output_high_tok_s",
     ("output_throughput_tok_s",)),
)  # fmt: skip


def _measured(summary: dict[str, Any], path: tuple[str, ...]) -> float:
    value: Any = summary
    for key in path:
        value = value[key]
    return float(value)


def _predict_level(plan: Plan, config: RunConfig, level: dict[str, Any], replicas: int) -> Any:
    spec = plan_spec(plan)
    values = plan_values(plan)
    layout = values.replica.layout
    summary = level["summary"]
    workload = replace(
        spec.workload,
        arrival=config.arrival,
        concurrency=max(1, level["concurrency"] or config.requests),
        request_rate_per_s=config.request_rate_rps,
        burst_size=config.requests,
        num_requests=config.requests,
        avg_input_tokens=max(1, round(summary["mean_input_tokens"] or config.input_tokens)),
        avg_output_tokens=max(1, round(summary["mean_output_tokens"] or config.output_tokens)),
        input_tokens_sd=config.input_tokens_sd,
        output_tokens_sd=config.output_tokens_sd,
        shared_prefix_fraction=config.shared_prefix_fraction,
    )
    spec = replace(spec, workload=workload)
    group = next((g for g in group_nodes(spec.hardware.nodes) if g.gpu_slug == layout.gpu), None)
    if group is None:
        raise PlanUnreadable(f"no {layout.gpu} nodes in the plan's hardware")
    a = spec_assumptions(spec, plan_assumptions(plan))
    cand = evaluate(spec, group, Layout(tp=layout.tp, pp=layout.pp, replicas=1),
                    dtype=layout.weight_dtype, a=a, pinned=True)  # fmt: skip
    if cand is None or cand.serving_context is None:
        raise PlanUnreadable(f"TP{layout.tp}×PP{layout.pp} does not fit {layout.gpu} nodes")
    return predict(cand.serving_context, workload, replicas=replicas,
                   band=band_for(serving_regime(spec, cand)), scan=False)  # fmt: skip


def _row(prediction: Any, summary: dict[str, Any]) -> dict[str, Any]:
    rows = {}
    for name, p50, low, high, path in QUANTITIES:
        planned = float(getattr(prediction, p50))
        measured = _measured(summary, path)
        lo, hi = float(getattr(prediction, low)), float(getattr(prediction, high))
        rows[name] = {
            "predicted": round(planned, 3),
            "low": round(lo, 3),
            "high": round(hi, 3),
            "measured": round(measured, 3),
            "deviation_pct": round(100 * (measured - planned) / planned, 1) if planned else None,
            "inside_band": lo <= measured <= hi if summary["completed"] else None,
        }
    return rows


def knee(points: list[tuple[int, float]]) -> int | None:
    """Return the fewest in flight whose throughput reaches KNEE_SHARE of the curve's highest."""
    if len(points) < 2:
        return None
    top = max(t for _, t in points)
    return min(c for c, t in points if t >= KNEE_SHARE * top) if top > 0 else None


def compare_with_plan(
    plan: Plan, config: RunConfig, levels: list[dict[str, Any]], *, replicas: int
) -> dict[str, Any]:
    """Return the per-level comparison, the knees and the band's basis (or why there is none)."""
    out_levels = []
    basis, runs = "", 0
    try:
        for level in levels:
            prediction = _predict_level(plan, config, level, replicas)
            basis, runs = prediction.band_basis, prediction.band_runs
            out_levels.append(
                {"concurrency": level["concurrency"], **_row(prediction, level["summary"])}
            )
    except (PlanUnreadable, ValueError) as exc:
        return {"error": str(exc), "levels": []}
    measured = [(lv["concurrency"], lv["output_tok_s"]["measured"]) for lv in out_levels
                if lv["concurrency"]]  # fmt: skip
    predicted = [(lv["concurrency"], lv["output_tok_s"]["predicted"]) for lv in out_levels
                 if lv["concurrency"]]  # fmt: skip
    return {
        "plan": str(plan.public_id),
        "replicas": replicas,
        "band_basis": basis,  # the engine's English; pages say it from band_runs
        "band_runs": runs,
        "levels": out_levels,
        "knee": {"measured": knee(measured), "predicted": knee(predicted)},
    }
