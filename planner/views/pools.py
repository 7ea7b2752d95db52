"""Pages of pool plans: several models placed on one pool."""

from __future__ import annotations

import uuid

from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views import View

from core.downloads import attachment
from planner.engine.pool.result import PoolResult
from planner.models import PoolPlan
from planner.presentation.pool_page import pool_page
from planner.services.bundles import BundleUnavailable
from planner.services.pools import pool_archive

PAGE_SIZE = 50


class PoolPlanListView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest) -> HttpResponse:
        qs = PoolPlan.objects.select_related("author").defer("spec", "engine_input", "result")
        page = Paginator(qs, PAGE_SIZE).get_page(request.GET.get("page"))
        return render(request, "planner/pool_list.html", {"page": page, "plans": page.object_list})


class PoolPlanBundleView(LoginRequiredMixin, View):
    """GET: the pool plan's bundle as a ZIP: its own route's, or ?route=A / ?route=C (a 400
    saying why when there is none)."""

    def get(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        plan = get_object_or_404(PoolPlan, public_id=public_id)
        try:
            archive, name = pool_archive(
                plan,
                serveplan_url=request.build_absolute_uri("/"),
                route=request.GET.get("route") or None,
            )
        except BundleUnavailable as exc:
            return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
        response = HttpResponse(archive, content_type="application/zip")
        response["Content-Disposition"] = attachment(name)
        return response


class PoolPlanDetailView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        plan = get_object_or_404(PoolPlan.objects.select_related("author"), public_id=public_id)
        page = pool_page(PoolResult.from_dict(plan.result))
        return render(request, "planner/pool_detail.html", {"plan": plan, "page": page})
