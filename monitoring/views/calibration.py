"""Calibration pages: fit a window of linked targets, preview before/after, save, plan with it."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View

from core.mixins import PlannerRequiredMixin
from core.roles import is_planner
from monitoring import selectors
from monitoring.models import Target, TargetKind
from monitoring.reality.calibration import calibration_create, calibration_run
from planner.engine.spec import SpecError
from planner.models import CalibrationProfile, Plan
from planner.services.plans import plan_with_calibration
from planner.throttles import evaluation_throttled


def _candidates():
    """vLLM targets linked to a plan, with the plan (a fit reads its result and spec)."""
    return (
        Target.objects.defer("token")
        .filter(kind=TargetKind.VLLM, plan__isnull=False)
        .select_related("plan")
        .order_by("name")
    )


CHART_QUANTITIES = (
    ("itl_ms", gettext_lazy("Inter-token latency p50: measured and predicted")),
    ("ttft_ms", gettext_lazy("TTFT p50: measured and predicted")),
)


def _list_context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    return {
        "chart_quantities": CHART_QUANTITIES,
        "profiles": CalibrationProfile.objects.select_related("created_by").order_by(
            "key", "-version"
        ),
        # The list shows names only: no plan results.
        "targets": _candidates().defer("plan__result", "plan__engine_input", "plan__spec"),
        "ranges": selectors.RANGES,
        "can_edit": is_planner(request.user),
        **extra,
    }


class CalibrationListView(View):
    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "monitoring/calibration_list.html", _list_context(request))


class CalibrationFitView(PlannerRequiredMixin, View):
    """Preview a fit (action=preview) or save it as a profile (action=save, the exact window)."""

    def post(self, request: HttpRequest) -> HttpResponse:
        ids = [i for i in request.POST.getlist("targets") if i.isdigit()]
        targets = list(_candidates().filter(pk__in=ids))
        window = selectors.posted_window(request.POST)
        errors: dict[str, list[str]] = {}
        if window is None:
            errors = {"window": [_("Choose a window.")]}
        else:
            start, end = window
            try:
                if request.POST.get("action") == "save":
                    profile = calibration_create(
                        targets=targets, start=start, end=end, actor=request.user
                    )
                    messages.success(request, _("Saved %(profile)s.") % {"profile": profile})
                    return HttpResponseRedirect(profile.get_absolute_url())
                run = calibration_run(targets=targets, start=start, end=end)
            except ValidationError as exc:
                errors = exc.message_dict
            else:
                context = _list_context(
                    request, run=run, chosen=[t.pk for t in targets], start=start, end=end
                )
                return render(request, "monitoring/calibration_list.html", context)
        context = _list_context(request, errors=errors, chosen=[t.pk for t in targets])
        return render(request, "monitoring/calibration_list.html", context, status=400)


class CalibrationDetailView(View):
    def get(self, request: HttpRequest, public_id: str) -> HttpResponse:
        profile = get_object_or_404(CalibrationProfile, public_id=public_id)
        plan_ids = {s.get("plan") for s in profile.sources}
        context = {
            "profile": profile,
            "source_plans": Plan.objects.filter(public_id__in=plan_ids).defer(
                "result", "engine_input"
            ),
            "plans": profile.plans.order_by("-created_at")[:20],
            "can_edit": is_planner(request.user),
            "chart_quantities": CHART_QUANTITIES,
        }
        return render(request, "monitoring/calibration_detail.html", context)


class CalibrationReplanView(PlannerRequiredMixin, View):
    """Re-run a plan's spec with this profile: a new plan saved with it."""

    @evaluation_throttled
    def post(self, request: HttpRequest, public_id: str) -> HttpResponse:
        profile = get_object_or_404(CalibrationProfile, public_id=public_id)
        plan = Plan.objects.filter(public_id=_uuid_or_none(request.POST.get("plan", ""))).first()
        if plan is None:
            messages.error(request, _("plan: choose a saved plan to run again."))
            return HttpResponseRedirect(profile.get_absolute_url())
        try:
            new = plan_with_calibration(plan=plan, profile=profile, actor=request.user)
        except SpecError as exc:
            messages.error(request, _("The plan could not be re-run: %s") % exc.errors)
            return HttpResponseRedirect(profile.get_absolute_url())
        messages.success(request, _("Planned again with %(profile)s.") % {"profile": profile})
        return HttpResponseRedirect(new.get_absolute_url())


def _uuid_or_none(value: str) -> uuid.UUID | None:
    """Return `value` as a UUID, or None when it is not one (a form field, never trusted)."""
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
