"""Evaluate specs with the engine and save, re-run and compare Plan snapshots.

Every write of a Plan goes through `plan_create` / `plan_rerun`; views, the API and the
management command call these.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from django.db import transaction

from planner.engine import plan as run_engine
from planner.engine.result import PlanResult
from planner.engine.spec import SpecError, spec_from_dict
from planner.models import CalibrationProfile, Plan, Route
from planner.services.calibration import (
    calibrated_assumptions,
    calibration_note,
    resolve_calibration,
)
from planner.services.resolve import ResolvedSpec, resolve_spec, user_error_keys


@cache
def engine_version() -> str:
    """Return the engine version with a digest of its source, e.g. "1.0.0+3fa2c91b0d4e"."""
    import planner.engine as engine

    digest = hashlib.sha256()
    root = Path(engine.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return f"{engine.ENGINE_VERSION}+{digest.hexdigest()[:12]}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """One engine run: the user spec, the resolved input and the typed result."""

    spec: dict[str, Any]
    resolved: ResolvedSpec
    result: PlanResult
    engine_version: str
    engine_ms: float
    calibration: CalibrationProfile | None = None

    @property
    def engine_input(self) -> dict[str, Any]:
        return self.resolved.engine_input


def plan_evaluate(*, spec: Mapping[str, Any]) -> Evaluation:
    """Resolve `spec`, run the engine and return its result; raise SpecError with field errors.

    All inventory reads happen in `resolve_spec` before the engine runs (fetch, then compute).
    """
    profile = resolve_calibration(spec.get("calibration")) if isinstance(spec, Mapping) else None
    assumptions = calibrated_assumptions(profile)
    resolved = resolve_spec(spec)
    engine_spec = _engine_spec(spec, resolved)
    started = time.perf_counter()
    result = run_engine(engine_spec, assumptions)
    engine_ms = (time.perf_counter() - started) * 1000
    kind = resolved.pool_kind_of(result.hosts)
    if kind != resolved.pool_kind:
        # Inferred from machines of several pools: the engine planned with the kind of those it
        # chose (a dedicated A800 pair beside a shared A100 pool); the stored input says so.
        hardware = {**resolved.engine_input["hardware"], "pool_kind": kind}
        resolved = replace(
            resolved, engine_input={**resolved.engine_input, "hardware": hardware}, pool_kind=kind
        )
    if profile is not None:
        family = engine_spec.architecture.model_type
        result = replace(result, calibration=calibration_note(profile, result, model_family=family))
    return Evaluation(
        spec=dict(spec),
        resolved=resolved,
        result=result,
        engine_version=engine_version(),
        engine_ms=engine_ms,
        calibration=profile,
    )


def _engine_spec(spec: Mapping[str, Any], resolved: ResolvedSpec) -> Any:
    try:
        return spec_from_dict(resolved.engine_input)
    except SpecError as exc:
        raise SpecError(user_error_keys(spec, exc.errors)) from exc


def used_hostnames(evaluation: Evaluation) -> list[str]:
    """Return the inventory machines the plan uses (the engine's choice among those offered)."""
    offered = evaluation.resolved.hostnames
    chosen = evaluation.result.hosts
    return [h for h in chosen if h in offered] or list(offered)


def default_title(evaluation: Evaluation) -> str:
    """Return e.g. 'Qwen2.5-72B-Instruct · Route B · TP4×PP2×1'."""
    rec = evaluation.result.recommendation
    model = evaluation.result.model.name or evaluation.resolved.model_slug
    if rec.route == Route.NONE:
        return f"{model} · nothing fits"
    return f"{model} · {rec.route} · {rec.label}"


@transaction.atomic
def plan_save(
    *, evaluation: Evaluation, actor: Any, title: str = "", rerun_of: Plan | None = None
) -> Plan:
    """Store an evaluation as an immutable Plan snapshot."""
    rec = evaluation.result.recommendation
    spec = {k: v for k, v in evaluation.spec.items() if k != "title"}
    plan = Plan(
        title=(title or evaluation.spec.get("title") or default_title(evaluation))[:200],
        author=actor,
        spec=spec,
        engine_input=evaluation.engine_input,
        result=evaluation.result.to_dict(),
        engine_version=evaluation.engine_version,
        model_slug=evaluation.resolved.model_slug,
        model_name=(evaluation.result.model.name or evaluation.resolved.model_slug or "model")[
            :200
        ],
        route=rec.route,
        tp=rec.tp,
        pp=rec.pp,
        replicas=rec.replicas,
        executor_backend=rec.executor_backend,
        balancer=rec.balancer,
        pool_kind=evaluation.resolved.pool_kind,
        hostnames=used_hostnames(evaluation),
        calibration=evaluation.calibration,
        rerun_of=rerun_of,
    )
    plan.full_clean()
    plan.save()
    return plan


def plan_create(*, spec: Mapping[str, Any], actor: Any, title: str = "") -> Plan:
    """Evaluate `spec` with the current engine and save the snapshot (SpecError if invalid)."""
    return plan_save(evaluation=plan_evaluate(spec=spec), actor=actor, title=title)


def plan_rerun(*, plan: Plan, actor: Any) -> Plan:
    """Evaluate a saved plan's spec with the current engine and save it as a new plan.

    The spec is resolved again, so machines changed in the inventory since are picked up.
    """
    evaluation = plan_evaluate(spec=plan.spec)
    return plan_save(evaluation=evaluation, actor=actor, title=plan.title, rerun_of=plan)


def plan_with_calibration(*, plan: Any, profile: CalibrationProfile, actor: Any) -> Any:
    """Evaluate a saved plan's spec again with `profile` and save it as a new plan."""
    spec = {**plan.spec, "calibration": str(profile.public_id)}
    evaluation = plan_evaluate(spec=spec)
    title = f"{plan.title} · {profile.key} v{profile.version}"[:200]
    return plan_save(evaluation=evaluation, actor=actor, title=title, rerun_of=plan)
