"""A run's way back into the plan: a calibration profile, and a decision record's evidence."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from benchmarks.models import BenchmarkRun, RunStatus
from benchmarks.services import replicas_behind
from monitoring.reality.evidence import round_measurement
from monitoring.reality.server_checks import model_matches
from planner.decisions.models import DecisionRecord, EvidenceSource
from planner.decisions.services import record_evidence_measurement
from planner.engine.calibration import NotEnoughData, Observation, fit_calibration
from planner.models import CalibrationProfile
from planner.selectors.plan_values import PlanUnreadable, PlanValues, plan_spec, plan_values
from planner.services.calibration import calibration_profile_save


def _usable(run: BenchmarkRun) -> PlanValues:
    """Return the plan's values for a finished run of the plan's own model, or refuse."""
    if run.status != RunStatus.SUCCEEDED or not run.levels:
        raise ValidationError({"run": _("Only a run that completed can be used.")})
    if run.plan is None:
        raise ValidationError({"plan": _("The run is not linked to a plan.")})
    try:
        values = plan_values(run.plan)
    except PlanUnreadable as exc:
        raise ValidationError({"plan": str(exc)}) from None
    if model_matches((run.model_name,), values) is not True:
        raise ValidationError(
            {
                "run": _("The server served %(served)s; the plan is for %(planned)s.")
                % {"served": run.model_name or "?", "planned": values.model_name}
            }
        )
    return values


def run_calibrate(*, run: BenchmarkRun, actor: Any = None) -> CalibrationProfile:
    """Fit the plan's correction factors from the run's levels and save the next profile."""
    values = _usable(run)
    plan = run.plan
    assert plan is not None  # _usable refused a run without one
    # The level's load is split over the plan's replicas the endpoint reaches.
    share = replicas_behind(run.target, plan) if run.target is not None else 1
    spec = plan_spec(plan)
    source = f"benchmark {run.public_id}"
    observations = [
        Observation(
            source=source,
            spec=spec,
            layout=values.replica.layout,
            concurrency=max(level["concurrency"] or 1, 1) / share,
            avg_input_tokens=level["summary"]["mean_input_tokens"],
            avg_output_tokens=level["summary"]["mean_output_tokens"],
            itl_ms=level["summary"]["itl"]["median_ms"] or None,
            ttft_ms=level["summary"]["ttft"]["median_ms"] or None,
        )
        for level in run.levels
        if level["summary"]["completed"]
    ]
    try:
        fit = fit_calibration(observations)
    except NotEnoughData:
        raise ValidationError({"run": _("No level of the run completed a request.")}) from None
    layout = values.replica.layout
    return calibration_profile_save(
        fit=fit,
        gpu=layout.gpu,
        model_family=values.model_family,
        weight_dtype=layout.weight_dtype,
        window_start=run.started_at or run.created_at,
        window_end=run.finished_at or run.created_at,
        sources=[
            {
                "benchmark": str(run.public_id),
                "target": run.target_name,
                "plan": values.public_id,
                "observations": len(observations),
            }
        ],
        actor=actor,
    )


def run_use_as_evidence(
    *, run: BenchmarkRun, decision: DecisionRecord, actor: Any = None
) -> list[str]:
    """Write the run's TTFT p95, ITL p95 and completion rate into the decision's evidence.

    The level nearest the plan's own load is used; throughput goes into each note.
    """
    if decision.plan_id is not None and decision.plan_id != run.plan_id:
        raise ValidationError({"decision": _("The decision is for another plan than the run.")})
    values = _usable(run)
    wanted = values.replica.concurrency
    level = min(
        (lv for lv in run.levels if lv["summary"]["completed"]),
        key=lambda lv: abs((lv["concurrency"] or wanted) - wanted),
    )
    s = level["summary"]
    where = (
        f"ServePlan benchmark {run.public_id} of {run.target_name} ({run.model_name}), "
        f"{level['concurrency'] or '-'} in flight, {s['completed']} of {s['requests']} requests, "
        f"{s['output_throughput_tok_s']:.1f} output tok/s, {s['request_throughput_rps']:.2f} req/s"
    )
    items = (
        ("ttft_p95", s["ttft"]["p95_ms"], "ms", "TTFT p95"),
        ("itl_p95", s["itl"]["p95_ms"], "ms", "ITL p95"),
        ("completion_rate", 100.0 * s["completed"] / max(s["sent"], 1), "%", "completed / sent"),
    )
    window = (run.started_at or run.created_at, run.finished_at or run.created_at)
    with transaction.atomic():
        for kind, value, unit, what in items:
            record_evidence_measurement(
                decision=decision,
                item_kind=kind,
                value=round_measurement(value, unit),
                unit=unit,
                source=EvidenceSource.MONITORING,
                window_start=window[0],
                window_end=window[1],
                note=f"{where}: {what}",
                actor=actor,
            )
    return [kind for kind, *_ in items]
