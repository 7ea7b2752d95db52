"""Pages of pool plans: several models placed on one pool."""

from __future__ import annotations

import uuid

from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views import View

from planner.engine.pool.result import PoolResult
from planner.models import PoolPlan
from planner.presentation.pool_page import pool_page

PAGE_SIZE = 50


class PoolPlanListView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest) -> HttpResponse:
        qs = PoolPlan.objects.select_related("author").defer("spec", "engine_input", "result")
        page = Paginator(qs, PAGE_SIZE).get_page(request.GET.get("page"))
        return render(request, "planner/pool_list.html", {"page": page, "plans": page.object_list})


class PoolPlanDetailView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        plan = get_object_or_404(PoolPlan.objects.select_related("author"), public_id=public_id)
        page = pool_page(PoolResult.from_dict(plan.result))
        return render(request, "planner/pool_detail.html", {"plan": plan, "page": page})
