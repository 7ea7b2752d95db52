"""Plan vs reality on the planner's pages: the plan page and the decision page.

A template tag keeps the planner's views free of monitoring imports: the planner does not
depend on monitoring, and a page without linked servers costs one query.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.db.models import Q

from monitoring import selectors
from monitoring.models import PlanScope, Target
from monitoring.plan_link import PlanUnreadable, Scope, plan_comparison

register = template.Library()


def _summaries(targets: list[Target]) -> list[dict[str, Any]]:
    """Return, per plan, one comparison: the whole plan once, each whole-plan target once."""
    start, end = selectors.resolve_range(selectors.DEFAULT_RANGE)
    out: list[dict[str, Any]] = []
    done: set[int] = set()
    for target in targets:
        key = target.plan_id if target.plan_scope == PlanScope.REPLICA else -target.pk
        if target.plan_id is None or key in done:
            continue
        done.add(key)
        try:
            comparison = plan_comparison(target, start=start, end=end, scope=Scope.PLAN)
        except PlanUnreadable as exc:
            out.append({"target": target, "comparison": None, "error": str(exc)})
            continue
        out.append(
            {
                "target": target,
                "comparison": comparison,
                "deviations": [r for r in comparison.rows if r.within_tolerance is False],
            }
        )
    return out


def _linked(condition: Q) -> list[Target]:
    return list(
        Target.objects.defer("token").filter(condition).select_related("plan").order_by("name")
    )


@register.inclusion_tag("monitoring/partials/plan_reality.html")
def plan_reality(plan: Any) -> dict[str, Any]:
    """Render plan vs reality for every server linked to `plan`."""
    targets = _linked(Q(plan=plan))
    return {"summaries": _summaries(targets), "targets": targets, "subject": "plan"}


@register.inclusion_tag("monitoring/partials/plan_reality.html")
def decision_reality(decision: Any) -> dict[str, Any]:
    """Render plan vs reality for the servers linked to `decision` or to its plan."""
    condition = Q(decision=decision)
    if decision.plan_id:
        condition |= Q(plan_id=decision.plan_id)
    targets = _linked(condition)
    return {"summaries": _summaries(targets), "targets": targets, "subject": "decision"}
