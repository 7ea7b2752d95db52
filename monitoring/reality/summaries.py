"""Plan vs reality for the planner's pages (a plan, a decision): one summary per plan.

The planner's pages never run this while they render: they hold a placeholder whose script
fetches the summaries from monitoring.views.reality, so a plan page never waits on monitoring
queries, however many servers are linked or however busy the sample tables are.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from monitoring import selectors
from monitoring.models import PlanScope, Target, TargetKind
from monitoring.reality.comparison import PlanComparison, PlanUnreadable, Scope, plan_comparison


@dataclass(frozen=True, slots=True)
class RealitySummary:
    """One comparison of a planner page: the target it was asked for, and its result or error."""

    target: Target
    comparison: PlanComparison | None
    error: str = ""


def _planned(target: Target) -> tuple[object, ...] | None:
    """Return what the target is compared with: its plan, or its model of a pool plan."""
    if target.plan_id is not None:
        return ("plan", target.plan_id)
    if target.pool_plan_id is not None:
        return ("pool", target.pool_plan_id, target.pool_model)
    return None


def summaries(targets: list[Target]) -> list[RealitySummary]:
    """Return, per plan (or per model of a pool plan), one comparison: the whole plan once,
    each whole-plan target once.

    A Ray cluster or GPU exporter linked to a plan is only compared (and explains why it cannot
    be) when no vLLM server is linked to that plan: the servers are what the plan predicts.
    """
    start, end = selectors.resolve_range(selectors.DEFAULT_RANGE)
    served = {_planned(t) for t in targets if t.kind == TargetKind.VLLM}
    out: list[RealitySummary] = []
    done: set[object] = set()
    for target in targets:
        planned = _planned(target)
        if planned is None or (target.kind != TargetKind.VLLM and planned in served):
            continue
        key = planned if target.plan_scope == PlanScope.REPLICA else ("target", target.pk)
        if key in done:
            continue
        done.add(key)
        try:
            comparison = plan_comparison(target, start=start, end=end, scope=Scope.PLAN)
        except PlanUnreadable as exc:
            out.append(RealitySummary(target, None, str(exc)))
        else:
            out.append(RealitySummary(target, comparison))
    return out


def linked_targets(condition: Q) -> list[Target]:
    """Return the targets, each plan fetched once and shared by its targets (a join would copy
    the plan's result JSON into every replica's row, and parse it once per replica)."""
    return list(
        Target.objects.defer("token").filter(condition).prefetch_related("plan").order_by("name")
    )
