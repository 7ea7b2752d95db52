"""Plan vs reality on the planner's pages: the plan page and the decision page.

A template tag keeps the planner's views free of monitoring imports (the planner does not
depend on monitoring). It renders a placeholder only: the page's script fetches the comparison
from monitoring.views.reality, so rendering a planner page runs no monitoring query at all.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

register = template.Library()


@register.inclusion_tag("monitoring/partials/plan_reality_deferred.html")
def plan_reality(plan: Any) -> dict[str, Any]:
    """Render the placeholder of plan vs reality for every server linked to `plan`."""
    return {"url": reverse("monitoring:plan-reality", kwargs={"public_id": plan.public_id})}


@register.inclusion_tag("monitoring/partials/plan_reality_deferred.html")
def pool_plan_reality(pool_plan: Any) -> dict[str, Any]:
    """Render the placeholder of plan vs reality for every model of `pool_plan` with linked
    servers."""
    return {
        "url": reverse("monitoring:pool-plan-reality", kwargs={"public_id": pool_plan.public_id})
    }


@register.inclusion_tag("monitoring/partials/plan_reality_deferred.html")
def decision_reality(decision: Any) -> dict[str, Any]:
    """Render the placeholder of plan vs reality for the servers linked to `decision` or to its
    plan."""
    return {"url": reverse("monitoring:decision-reality", kwargs={"number": decision.number})}
