"""Pages: the runs, a new run, one run (live progress, plan side by side), its actions."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views import View

from benchmarks import exports, feedback, selectors, services
from benchmarks.config import FIELDS
from benchmarks.models import BenchmarkRun
from core.mixins import PlannerRequiredMixin
from monitoring.models import Target, TargetKind
from planner.decisions.models import DecisionRecord
from planner.models import Plan


def _errors_text(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
    return " ".join(exc.messages)


class RunListView(PlannerRequiredMixin, View):
    def get(self, request: HttpRequest) -> HttpResponse:
        targets = Target.objects.filter(kind=TargetKind.VLLM).defer("token", "latest")
        return render(
            request,
            "benchmarks/list.html",
            {
                "runs": selectors.run_list()[:100],
                "targets": targets.select_related("plan").order_by("name"),
                "plans": Plan.objects.order_by("-created_at")[:50],
            },
        )

    def post(self, request: HttpRequest) -> HttpResponse:
        target = get_object_or_404(Target, pk=request.POST.get("target") or 0)
        plan_id = request.POST.get("plan") or None
        plan = get_object_or_404(Plan, public_id=plan_id) if plan_id else None
        data: dict[str, Any] = {k: request.POST[k] for k in FIELDS if request.POST.get(k)}
        try:
            run = services.run_create(target=target, plan=plan, data=data, actor=request.user)
        except ValidationError as exc:
            messages.error(request, _errors_text(exc))
            return redirect("benchmarks:list")
        return redirect(run.get_absolute_url())


class RunDetailView(PlannerRequiredMixin, View):
    def get(self, request: HttpRequest, public_id: str) -> HttpResponse:
        run = get_object_or_404(selectors.run_list().select_related("target"), public_id=public_id)
        decisions = DecisionRecord.objects.filter(plan=run.plan) if run.plan else []
        return render(request, "benchmarks/detail.html", {"run": run, "decisions": decisions})


class RunProgressView(PlannerRequiredMixin, View):
    """The JSON the page polls while a run is under way."""

    def get(self, request: HttpRequest, public_id: str) -> JsonResponse:
        run = get_object_or_404(selectors.run_list(), public_id=public_id)
        return JsonResponse(
            {"status": run.status, "active": run.is_active, "progress": run.progress}
        )


class RunCancelView(PlannerRequiredMixin, View):
    def post(self, request: HttpRequest, public_id: str) -> HttpResponse:
        run = get_object_or_404(BenchmarkRun, public_id=public_id)
        services.run_cancel(run=run, actor=request.user)
        return redirect(run.get_absolute_url())


class RunCalibrateView(PlannerRequiredMixin, View):
    def post(self, request: HttpRequest, public_id: str) -> HttpResponse:
        run = get_object_or_404(BenchmarkRun, public_id=public_id)
        try:
            profile = feedback.run_calibrate(run=run, actor=request.user)
        except ValidationError as exc:
            messages.error(request, _errors_text(exc))
            return redirect(run.get_absolute_url())
        messages.success(
            request,
            _("Calibration profile %(key)s v%(version)s saved from this run.")
            % {"key": profile.key, "version": profile.version},
        )
        return redirect("monitoring:calibration-detail", profile.public_id)


class RunEvidenceView(PlannerRequiredMixin, View):
    def post(self, request: HttpRequest, public_id: str) -> HttpResponse:
        run = get_object_or_404(BenchmarkRun, public_id=public_id)
        decision = get_object_or_404(DecisionRecord, pk=request.POST.get("decision") or 0)
        try:
            feedback.run_use_as_evidence(run=run, decision=decision, actor=request.user)
        except ValidationError as exc:
            messages.error(request, _errors_text(exc))
            return redirect(run.get_absolute_url())
        messages.success(request, _("The run's measurements are in the decision's evidence."))
        return redirect(decision.get_absolute_url())


class RunExportView(PlannerRequiredMixin, View):
    def get(self, request: HttpRequest, public_id: str, fmt: str) -> HttpResponse:
        run = get_object_or_404(BenchmarkRun, public_id=public_id)
        if fmt not in ("csv", "json"):
            raise Http404
        return exports.csv_response(run) if fmt == "csv" else exports.json_response(run)
