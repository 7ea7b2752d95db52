"""Monitoring pages: fleet overview, targets, target dashboards, alert events."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views import View
from django.views.generic import TemplateView
from django_filters.views import FilterView

from core.mixins import PlannerRequiredMixin
from core.roles import is_planner
from monitoring import charts, selectors, services
from monitoring.filters import AlertEventFilter, TargetFilter
from monitoring.forms import TargetForm
from monitoring.machines import overview
from monitoring.models import AlertEvent, AlertRule, Target, TargetKind
from monitoring.reality import observation
from monitoring.reality.comparison import (
    PlanComparison,
    PlanUnreadable,
    Quantity,
    Scope,
    plan_comparison,
)
from monitoring.reality.evidence import evidence_fill
from monitoring.series import Forgotten, StoreUnavailable
from monitoring.shared_cache import shared
from monitoring.targets import kinds
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


class OverviewTilesView(View):
    """The tiles and totals alone, re-fetched by the overview page's script every 5 s.

    The same HTML for every user of a language: rendered once per few seconds for all of them.
    """

    template_name = "monitoring/partials/fleet.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        def render_tiles() -> str:
            context = {"fleet": selectors.fleet_overview()}
            return render_to_string(self.template_name, context, request=request)

        return HttpResponse(shared("overview-tiles", render_tiles))


class MachinesView(TemplateView):
    """Every inventory machine with its GPUs (the GPU exporters' last polls)."""

    template_name = "monitoring/machines.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["overview"] = overview.machines_overview()
        context["charts"] = charts.MACHINES
        context["refresh_ms"] = OVERVIEW_REFRESH_MS
        context["ranges"] = selectors.RANGES
        context["can_edit"] = is_planner(self.request.user)
        return context


class MachinesGridView(TemplateView):
    """The machine cards alone, re-fetched by the Machines page's script."""

    template_name = "monitoring/partials/machines_grid.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["overview"] = overview.machines_overview()
        return context


class MachinesRegisterView(PlannerRequiredMixin, View):
    """Create or update one GPU target per inventory machine with a GPU metrics URL."""

    def post(self, request: HttpRequest) -> HttpResponse:
        report = services.gpu_targets_register()
        if report.created or report.updated:
            messages.success(
                request,
                _("GPU targets: %(created)d created, %(updated)d updated.")
                % {"created": len(report.created), "updated": len(report.updated)},
            )
        elif not report.refused:
            messages.info(
                request, _("Every machine with a GPU metrics URL already has its target.")
            )
        for hostname, error in report.refused:
            messages.error(
                request,
                _("%(machine)s: not registered: %(error)s") % {"machine": hostname, "error": error},
            )
        return HttpResponseRedirect(reverse("monitoring:machines"))


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
    """Confirm with what would be lost (sample counts), or disable the target instead."""

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(Target.objects.defer("token"), pk=pk)
        context = {"object": target, "impact": selectors.target_delete_impact(target)}
        return render(request, "monitoring/target_confirm_delete.html", context)

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(Target.objects.defer("token"), pk=pk)
        if request.POST.get("action") == "disable":
            services.target_update(target=target, enabled=False)
            messages.success(request, _("Target disabled: no more polls; its data is kept."))
            return HttpResponseRedirect(target.get_absolute_url())
        try:
            forgotten = services.target_delete(target=target)
        except Target.DoesNotExist:  # another delete took it first
            raise Http404 from None
        if forgotten.outcome is Forgotten.KEPT:
            messages.warning(
                request,
                _(
                    "Target deleted with its alerts, but the time-series server kept its series"
                    " (%(reason)s). Delete them there: %(selector)s"
                )
                % {"reason": forgotten.reason, "selector": forgotten.selector},
            )
        elif forgotten.outcome is Forgotten.NOT_OURS:
            messages.success(
                request,
                _("Target deleted with its alerts. Its series stay in your Prometheus."),
            )
        else:
            messages.success(request, _("Target deleted with its samples and alerts."))
        return HttpResponseRedirect(reverse("monitoring:target-list"))


def comparison_for_page(
    request: HttpRequest, target: Target
) -> tuple[PlanComparison | None, str, str]:
    """Return the plan comparison over the page's window (?window=, ?scope=) and any error."""
    window = request.GET.get("window") or selectors.DEFAULT_RANGE
    if window not in selectors.RANGES:
        window = selectors.DEFAULT_RANGE
    start, end = selectors.resolve_range(window)
    scope = request.GET.get("scope") or Scope.REPLICA
    try:
        return plan_comparison(target, start=start, end=end, scope=scope), window, ""
    except PlanUnreadable as exc:
        return None, window, str(exc)


def chart_lines(comparison: PlanComparison | None, rules: list[AlertRule]) -> charts.ChartLines:
    """Return the plan's, the SLO's and the alert rules' lines for a target's charts."""
    gpu_memory = _rule_threshold(rules, GPU_MEMORY_SERIES)
    if comparison is None:
        return charts.ChartLines(gpu_memory_alert_pct=gpu_memory)
    ttft, itl = comparison.row(Quantity.TTFT_P95), comparison.row(Quantity.ITL_P95)
    return charts.ChartLines(
        kv_plan_pct=_kv_plan_pct(comparison),
        ttft_plan_ms=ttft.planned if ttft else None,
        ttft_slo_ms=comparison.ttft_slo_ms,
        itl_plan_ms=itl.planned if itl else None,
        itl_slo_ms=comparison.itl_slo_ms,
        gpu_memory_alert_pct=gpu_memory,
    )


GPU_MEMORY_SERIES = "gpu.memory_used_pct"


def _rule_threshold(rules: list[AlertRule], series: str) -> float | None:
    """Return the threshold of the enabled rule on `series`: the target's own, else the fleet's."""
    enabled = [r for r in rules if r.enabled and r.series == series]
    own = [r for r in enabled if r.target_id is not None]
    return (own or enabled)[0].threshold if enabled else None


def _target_context(request: HttpRequest, target: Target) -> dict[str, Any]:
    comparison, window, error = comparison_for_page(request, target)
    kind = kinds.get(target.kind)
    return {
        "kind": kind,
        # The kind's own page state (Ray nodes and Serve apps, GPUs of the machine).
        target.kind: kind.page_state(target),
        "target": target,
        "state": selectors.target_state(target, timezone.now()),
        "refresh_ms": _refresh_ms(target),
        "ranges": selectors.RANGES,
        "events": selectors.recent_events(target=target, limit=20),
        "rules": list(
            AlertRule.objects.filter(Q(target=target) | Q(target__isnull=True)).order_by("name")
        ),
        "can_edit": is_planner(request.user),
        "comparison": comparison,
        "comparison_error": error,
        "comparison_window": window,
        "cache_config": (target.info or {}).get("cache_config", {}),
        # The server's model and context length (/v1/models, or labels when read-only).
        "served": observation.served_config(target) if target.kind == TargetKind.VLLM else None,
    }


class TargetDetailView(View):
    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(
            Target.objects.defer("token").select_related("plan", "decision"), pk=pk
        )
        context = _target_context(request, target)
        context["charts"] = context["kind"].charts(
            chart_lines(context["comparison"], context["rules"])
        )
        return render(request, "monitoring/target_detail.html", context)


KV_PLAN_LINE_MAX_PCT = 200.0  # beyond it the plan's capacity is no line on a usage chart


def _kv_plan_pct(comparison: PlanComparison) -> float | None:
    """Return where the plan's KV capacity sits on this server's usage scale, in %.

    Like for like: one replica's planned blocks against this server's blocks (100 % when the
    server has exactly the planned capacity); a whole-plan target against all planned replicas.
    A plan that planned far more capacity than the server has (more than twice: another model
    or layout, which the comparison warns about) would sit at, say, 1,550 % of a usage axis whose
    series ends at 100 % and flatten it: no line is drawn, the comparison table shows the
    deviation.
    """
    row = comparison.row(Quantity.KV_BLOCKS) or comparison.row(Quantity.KV_CAPACITY_TOKENS)
    if row is None or not row.planned or not row.observed or len(comparison.targets) != 1:
        return None
    pct = round(100.0 * row.planned / row.observed, 1)
    return pct if pct <= KV_PLAN_LINE_MAX_PCT else None


class TargetPanelsView(View):
    """The target page's status and tables alone, re-fetched by its script."""

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(
            Target.objects.defer("token").select_related("plan", "decision"), pk=pk
        )
        context = _target_context(request, target)
        return render(request, "monitoring/partials/target_panels.html", context)


class TargetEvidenceView(PlannerRequiredMixin, View):
    """Fill the linked decision's evidence from the target's samples over the chosen range.

    Values typed by hand are held back: the page lists them and asks before replacing any.
    The confirmation carries the exact window, so the confirmed values are the ones shown.
    A server of another model than the record's is refused (409) unless the user overrides
    explicitly; the override is written into each value's note.
    """

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        target = get_object_or_404(Target.objects.defer("token").select_related("decision"), pk=pk)
        if target.decision_id is None:
            messages.error(request, _("This target is not linked to a decision record."))
            return HttpResponseRedirect(target.get_absolute_url())
        window = selectors.posted_window(request.POST, default_range=selectors.DEFAULT_RANGE)
        if window is None or window[1] < window[0]:
            messages.error(request, _("The window is not a valid pair of times."))
            return HttpResponseRedirect(target.get_absolute_url())
        start, end = window
        try:
            result = evidence_fill(
                target=target,
                start=start,
                end=end,
                actor=request.user,
                overwrite=request.POST.getlist("overwrite"),
                kinds=request.POST.getlist("kind") if "confirmed" in request.POST else None,
                accept_other_model=request.POST.get("accept_other_model") == "1",
            )
        except StoreUnavailable:  # a read-only target's Prometheus: unset or not answering
            messages.error(
                request, _("This target's time-series server does not answer: nothing was filled.")
            )
            return HttpResponseRedirect(target.get_absolute_url())
        except (ValidationError, DecisionError) as exc:
            messages.error(request, _("The decision record refused the values: %s") % exc)
            return HttpResponseRedirect(target.get_absolute_url())
        if result.refused:
            context = {"target": target, "refused": result.refused, "start": start, "end": end}
            return render(request, "monitoring/evidence_refused.html", context, status=409)
        if result.filled:
            messages.success(
                request,
                ngettext(
                    "Filled %(n)d evidence item of the decision from %(start)s to %(end)s UTC.",
                    "Filled %(n)d evidence items of the decision from %(start)s to %(end)s UTC.",
                    len(result.filled),
                )
                % {
                    "n": len(result.filled),
                    "start": start.strftime("%Y-%m-%d %H:%M"),
                    "end": end.strftime("%H:%M"),
                },
            )
        if result.held and "confirmed" not in request.POST:
            context = {"target": target, "held": result.held, "start": start, "end": end}
            return render(request, "monitoring/evidence_confirm.html", context)
        if not result.filled and not result.held:
            messages.warning(
                request,
                _("No latency or completion data in that window: nothing was filled."),
            )
        elif result.held:
            messages.info(request, _("Values typed by hand were kept."))
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
