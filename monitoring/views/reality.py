"""Plan vs reality of a plan, a pool plan or a decision, as the HTML section their pages load."""

from __future__ import annotations

import uuid

from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import View

from monitoring.models import Target
from monitoring.reality.summaries import linked_targets, summaries
from planner.decisions.selectors import decision_get
from planner.selectors import plan_get, pool_plan_get

TEMPLATE = "monitoring/partials/plan_reality.html"


class PlanRealityView(View):
    """The plan page's plan vs reality section: every server linked to the plan."""

    def get(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        plan = plan_get(public_id)
        targets = list(Target.objects.defer("token").filter(plan=plan).order_by("name"))
        for target in targets:
            target.plan = plan  # one instance: its result is read once for every replica
        context = {"summaries": summaries(targets), "targets": targets, "subject": "plan"}
        return render(request, TEMPLATE, context)


class PoolPlanRealityView(View):
    """The pool plan page's section: one comparison per model with linked servers."""

    def get(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        pool = pool_plan_get(public_id)
        targets = list(
            Target.objects.defer("token").filter(pool_plan=pool).order_by("pool_model", "name")
        )
        for target in targets:
            target.pool_plan = pool  # one instance: its result is read once per model
        context = {"summaries": summaries(targets), "targets": targets, "subject": "pool"}
        return render(request, TEMPLATE, context)


class DecisionRealityView(View):
    """The decision page's section: the servers linked to the decision or to its plan."""

    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = decision_get(number)
        condition = Q(decision=decision)
        if decision.plan_id:
            condition |= Q(plan_id=decision.plan_id)
        targets = linked_targets(condition)
        context = {"summaries": summaries(targets), "targets": targets, "subject": "decision"}
        return render(request, TEMPLATE, context)
