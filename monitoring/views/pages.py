"""Monitoring pages: fleet overview, targets, target dashboards, alert events."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views import View
from django.views.generic import TemplateView
from django_filters.views import FilterView

from core.mixins import PlannerRequiredMixin
from core.roles import is_planner
from monitoring import charts, selectors, services
from monitoring.evidence import evidence_fill
from monitoring.filters import AlertEventFilter, TargetFilter
from monitoring.forms import TargetForm
from monitoring.models import AlertEvent, AlertRule, Target, TargetKind
from monitoring.plan_link import plan_vs_reality
from planner.decisions.services import DecisionError

OVERVIEW_REFRESH_MS = 5000


def _refresh_ms(target: Target) -> int:
    """Charts refresh at least once per poll interval (at most every 5 s)."""
    return max(5, min(target.poll_interval_s, 15)) * 1000


class OverviewView(TemplateView):
    template_name = "monitoring/overview.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["fleet"] = selectors.fleet_overview()
        context["charts"] = charts.OVERVIEW
        context["refresh_ms"] = OVERVIEW_REFRESH_MS
        context["ranges"] = selectors.RANGES
        context["can_edit"] = is_planner(self.request.user)
        return context


class OverviewTilesView(TemplateView):
    """The tiles and totals alone, re-fetched by the overview page's script."""

    template_name = "monitoring/partials/fleet.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["fleet"] = selectors.fleet_overview()
        return context


class TargetListView(FilterView):
    template_name = "monitoring/target_list.html"
    filterset_class = TargetFilter
    paginate_by = 50
    strict = False

    def get_queryset(self):
        return selectors.targets_list().annotate(
            has_token_flag=Exists(Target.objects.filter(pk=OuterRef("pk")).exclude(token=""))
        )

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["can_edit"] = is_planner(self.request.user)
        return context


class TargetFormView(PlannerRequiredMixin, View):
    template_name = "monitoring/target_form.html"

    def _target(self, pk: int | None) -> Target | None:
        if pk is None:
            return None
        return get_object_or_404(Target.objects.defer("token"), pk=pk)

    def _has_token(self, target: Target | None) -> bool:
        return target is not None and Target.objects.filter(pk=target.pk).exclude(token="").exists()

    def get(self, request: HttpRequest, pk: int | None = None) -> HttpResponse:
        target = self._target(pk)
        form = TargetForm(instance=target, has_token=self._has_token(target))
        return render(request, self.template_name, {"form": form, "object": target})

    def post(self, request: HttpRequest, pk: int | None = None) -> HttpResponse:
        target = self._target(pk)
        form = TargetForm(request.POST, instance=target, has_token=self._has_token(target))
        if form.is_valid():
            try:
                saved = form.save()
            except ValidationError:
                pass
            else:
                messages.success(request, _("Saved. The target is polled within seconds."))
                return HttpResponseRedirect(saved.get_absolute_url())
        return render(request, self.template_name, {"form": form, "object": target}, status=400)


class TargetDeleteView(PlannerRequiredMixin, View):
    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(Target.objects.defer("token"), pk=pk)
        return render(request, "monitoring/target_confirm_delete.html", {"object": target})

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(Target.objects.defer("token"), pk=pk)
        services.target_delete(target=target)
        messages.success(request, _("Target deleted with its samples and alerts."))
        return HttpResponseRedirect(reverse("monitoring:target-list"))


def _target_context(request: HttpRequest, target: Target) -> dict[str, Any]:
    return {
        "target": target,
        "state": selectors.target_state(target, timezone.now()),
        "refresh_ms": _refresh_ms(target),
        "ranges": selectors.RANGES,
        "events": selectors.recent_events(target=target, limit=20),
        "rules": AlertRule.objects.filter(target=target).order_by("name")
        | AlertRule.objects.filter(target__isnull=True),
        "can_edit": is_planner(request.user),
        "plan": plan_vs_reality(target),
        "cache_config": (target.info or {}).get("cache_config", {}),
    }


class TargetDetailView(View):
    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(
            Target.objects.defer("token").select_related("plan", "decision"), pk=pk
        )
        template = (
            "monitoring/ray_target.html"
            if target.kind == TargetKind.RAY
            else "monitoring/vllm_target.html"
        )
        context = _target_context(request, target)
        if target.kind == TargetKind.RAY:
            context["ray"] = selectors.ray_state(target)
            context["charts"] = charts.ray_charts()
        else:
            context["charts"] = charts.vllm_charts(
                kv_plan_pct=_kv_plan_pct(context["plan"], target)
            )
        return render(request, template, context)


def _kv_plan_pct(plan: dict[str, Any] | None, target: Target) -> float | None:
    """Return the plan's KV capacity as a % of the live capacity (the KV chart's line)."""
    if not plan:
        return None
    planned = next((r["planned"] for r in plan["rows"] if r["unit"] == _("tokens")), None)
    live = (target.latest or {}).get("vllm.kv_cache_capacity_tokens")
    if not planned or not live:
        return None
    return round(100.0 * planned / live, 1)


class TargetPanelsView(View):
    """The target page's status and tables alone, re-fetched by its script."""

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(
            Target.objects.defer("token").select_related("plan", "decision"), pk=pk
        )
        context = _target_context(request, target)
        if target.kind == TargetKind.RAY:
            context["ray"] = selectors.ray_state(target)
        return render(request, "monitoring/partials/target_panels.html", context)


class TargetEvidenceView(PlannerRequiredMixin, View):
    """Fill the linked decision's evidence from the target's samples over the chosen range."""

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(Target.objects.defer("token").select_related("decision"), pk=pk)
        if target.decision_id is None:
            messages.error(request, _("This target is not linked to a decision record."))
            return HttpResponseRedirect(target.get_absolute_url())
        range_name = request.POST.get("range", selectors.DEFAULT_RANGE)
        start, end = selectors.resolve_range(range_name)
        try:
            measured = evidence_fill(target=target, start=start, end=end, user=request.user)
        except (ValidationError, DecisionError) as exc:
            messages.error(request, _("The decision record refused the values: %s") % exc)
            return HttpResponseRedirect(target.get_absolute_url())
        if measured:
            messages.success(
                request,
                _("Filled %(n)d evidence item(s) of the decision from the last %(range)s.")
                % {"n": len(measured), "range": range_name},
            )
        else:
            messages.warning(
                request,
                _("No latency or completion data in that window: nothing was filled."),
            )
        return HttpResponseRedirect(target.get_absolute_url())


class EventListView(FilterView):
    template_name = "monitoring/event_list.html"
    filterset_class = AlertEventFilter
    paginate_by = 50
    strict = False

    def get_queryset(self):
        return (
            AlertEvent.objects.select_related("rule", "target")
            .defer("target__token", "target__info", "target__latest")
            .order_by("-opened_at")
        )
