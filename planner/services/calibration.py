"""Calibration profiles: save a fit as a new version, and apply a profile to a plan's engine run."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Max

from planner.engine.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from planner.engine.calibration import FACTOR_UNITS, CalibrationFactors, CalibrationFit, calibrated
from planner.engine.result import CalibrationNote, PlanResult
from planner.engine.spec import SpecError
from planner.models import CalibrationProfile
from planner.selectors.plan_values import calibration_key


def _jsonable(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def factors_json(fit: CalibrationFit) -> dict[str, dict[str, Any]]:
    """Return {factor: {value, stderr, fitted, unit}} as a profile stores it."""
    return {
        name: {
            "value": _jsonable(est.value),
            "stderr": _jsonable(est.stderr),
            "fitted": est.fitted,
            "unit": FACTOR_UNITS[name],
        }
        for name, est in fit.estimates.items()
    }


def residuals_json(fit: CalibrationFit) -> list[dict[str, Any]]:
    """Return every measurement with its prediction before and after, as a profile stores it."""
    return [
        {
            "source": r.source,
            "quantity": r.quantity,
            "concurrency": _jsonable(r.concurrency, 2),
            "measured": _jsonable(r.measured, 3),
            "before": _jsonable(r.before, 3),
            "after": _jsonable(r.after, 3),
        }
        for r in fit.residuals
    ]


@transaction.atomic
def calibration_profile_save(
    *,
    fit: CalibrationFit,
    gpu: str,
    model_family: str,
    weight_dtype: str,
    window_start: datetime,
    window_end: datetime,
    sources: list[dict[str, Any]],
    actor: Any | None = None,
) -> CalibrationProfile:
    """Store a fit as the next version of its GPU type × model family × dtype profile."""
    key = calibration_key(gpu, model_family, weight_dtype)
    # Lock the key's rows so two saves of one key never take the same version.
    latest = (
        CalibrationProfile.objects.select_for_update()
        .filter(key=key)
        .aggregate(v=Max("version"))["v"]
    )
    profile = CalibrationProfile(
        key=key,
        gpu=gpu,
        model_family=model_family,
        weight_dtype=weight_dtype,
        version=(latest or 0) + 1,
        created_by=actor if getattr(actor, "pk", None) else None,
        factors=factors_json(fit),
        window_start=window_start,
        window_end=window_end,
        sources=sources,
        residuals=residuals_json(fit),
        observations=fit.observations,
        rms_error_before_pct=_jsonable(fit.rms_pct("before"), 2),
        rms_error_after_pct=_jsonable(fit.rms_pct("after"), 2),
    )
    profile.full_clean()
    profile.save()
    return profile


def profile_factors(profile: CalibrationProfile) -> CalibrationFactors:
    """Return a saved profile's factors (unfitted ones keep the engine's values)."""
    f = profile.factors

    def value(name: str, default: float) -> float:
        entry = f.get(name) or {}
        return float(entry["value"]) if entry.get("fitted") else default

    per_request = f.get("per_request_overhead_ms") or {}
    return CalibrationFactors(
        kv_overhead_gib=value("kv_overhead_gib", 0.0),
        decode_efficiency=value("decode_efficiency", 1.0),
        prefill_efficiency=value("prefill_efficiency", 1.0),
        per_request_overhead_ms=float(per_request["value"]) if per_request.get("fitted") else None,
    )


def resolve_calibration(reference: Any) -> CalibrationProfile | None:
    """Return the profile a spec names by public_id (None when it names none)."""
    if reference in (None, ""):
        return None
    profile = CalibrationProfile.objects.filter(public_id=_uuid(reference)).first()
    if profile is None:
        raise SpecError({"calibration": f"no calibration profile {reference!r}"})
    return profile


def _uuid(reference: Any) -> Any:
    import uuid

    try:
        return uuid.UUID(str(reference))
    except ValueError:
        raise SpecError(
            {"calibration": f"{reference!r} is not a calibration profile id (a UUID)"}
        ) from None


def calibrated_assumptions(profile: CalibrationProfile | None) -> Assumptions:
    """Return the engine's assumptions corrected by the profile (the defaults without one)."""
    if profile is None:
        return DEFAULT_ASSUMPTIONS
    return calibrated(DEFAULT_ASSUMPTIONS, profile_factors(profile))


def calibration_note(
    profile: CalibrationProfile, result: PlanResult, *, model_family: str
) -> CalibrationNote:
    """Return what a plan's result says about the profile it was computed with."""
    best = result.best
    matches = (
        best is not None
        and best.gpu == profile.gpu
        and result.recommendation.weight_dtype == profile.weight_dtype
        and model_family == profile.model_family
    )
    return CalibrationNote(
        profile=str(profile.public_id),
        key=profile.key,
        version=profile.version,
        factors={name: entry.get("value") for name, entry in profile.factors.items()},
        # A profile fitted on other GPUs, another model family or dtype still applied, but the
        # result says so: its factors may not carry over.
        matches_layout=bool(matches),
    )
