"""Saved plans and their typed results."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.shortcuts import get_object_or_404

from planner.engine.result import Candidate, PlanResult, ResultFormatError
from planner.models import Plan, PoolPlan

log = logging.getLogger(__name__)

_CACHE_ATTR = "_typed_result"


def plan_get(public_id: Any) -> Plan:
    """Return the plan with its author and re-run source, or raise Http404."""
    return get_object_or_404(
        Plan.objects.with_author().select_related("rerun_of"), public_id=public_id
    )


def pool_plan_get(public_id: Any) -> PoolPlan:
    """Return the pool plan, or raise Http404."""
    return get_object_or_404(PoolPlan, public_id=public_id)


def _row_defaults(plan: Plan) -> dict[str, Any]:
    """Return what the plan's own columns say, for snapshots whose result lacks it."""
    return {
        "recommendation": {
            "route": plan.route,
            "tp": plan.tp,
            "pp": plan.pp,
            "replicas": plan.replicas,
            "executor_backend": plan.executor_backend or "mp",
            "balancer": plan.balancer or "none",
        },
        "model": {"name": plan.model_name, "slug": plan.model_slug},
        "node_selection": {"hosts": list(plan.hostnames or [])},
    }


def _with_defaults(stored: Mapping[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    out = dict(stored)
    for section, values in defaults.items():
        current = out.get(section)
        current = current if isinstance(current, Mapping) else {}
        out[section] = {**values, **{k: v for k, v in current.items() if v not in (None, [])}}
    return out


def plan_result(plan: Plan) -> PlanResult:
    """Return the typed result of a saved plan, read once per Plan instance.

    Results saved before the contract was versioned may lack whole sections; the plan's own
    columns (route, layout, backend, model, machines) fill those in. A result that no version
    of the contract describes is logged and read as those columns alone.
    """
    cached: PlanResult | None = plan.__dict__.get(_CACHE_ATTR)
    if cached is not None:
        return cached
    stored = plan.result if isinstance(plan.result, Mapping) else {}
    if "schema_version" not in stored:
        stored = _with_defaults(stored, _row_defaults(plan))
    try:
        result = PlanResult.from_dict(stored)
    except ResultFormatError as exc:
        log.warning("plan %s: unreadable result (%s); showing its columns only", plan.pk, exc)
        result = PlanResult.from_dict(_row_defaults(plan))
    plan.__dict__[_CACHE_ATTR] = result
    return result


def plan_best_candidate(plan: Plan) -> Candidate | None:
    """Return the recommended layout of a saved plan (None for legacy snapshots without it)."""
    return plan_result(plan).best
