"""Pages of pool plans: several models placed on one pool."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views import View

from core.downloads import attachment
from core.mixins import PlannerRequiredMixin
from core.roles import is_planner
from planner.engine.pool.result import PoolResult
from planner.engine.pool.spec import MAX_POOL_MODELS
from planner.engine.spec import SpecError
from planner.forms.pool_whatif import PoolWhatIfForm
from planner.forms.pool_wizard import (
    DEFAULT_ROWS,
    PoolOptionsForm,
    model_formset,
    place_engine_errors,
)
from planner.forms.wizard import MachinesStepForm, active_machines
from planner.models import PoolPlan
from planner.presentation.pool_compare import compare_pools
from planner.presentation.pool_page import pool_page
from planner.services.bundles import BundleUnavailable
from planner.services.pools import pool_archive, pool_create, pool_evaluate, pool_model_names
from planner.throttles import evaluation_throttled

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
        form = PoolWhatIfForm(models=pool_model_names(plan))
        return _detail(request, plan, PoolResult.from_dict(plan.result), form)


def _detail(
    request: HttpRequest,
    plan: PoolPlan,
    result: PoolResult,
    form: PoolWhatIfForm,
    status: int = 200,
) -> HttpResponse:
    """Render the pool plan page (with the what-if form's errors, when it has some)."""
    context = {
        "plan": plan,
        "page": pool_page(result),
        "what_if_form": form,
        "can_write": is_planner(request.user),
    }
    return render(request, "planner/pool_detail.html", context, status=status)


class PoolWizardView(PlannerRequiredMixin, View):
    """GET: the "several models" wizard (machines once, a row per model); POST: place them and
    save the pool plan, or show each error on the row and field it names (nothing is saved)."""

    template_name = "planner/pool_wizard.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        machines = active_machines()
        source = "fleet" if machines else "hypothetical"
        form = MachinesStepForm(initial={"source": source}, machines=machines)
        rows = _rows(request.GET.get("rows"))
        return self._render(request, form, model_formset(rows=rows), PoolOptionsForm(), title="")

    def post(self, request: HttpRequest) -> HttpResponse:
        form = MachinesStepForm(request.POST, machines=active_machines())
        formset = model_formset(request.POST)
        options = PoolOptionsForm(request.POST)
        title = request.POST.get("title", "").strip()[:200]
        others: list[str] = []
        if form.is_valid() and formset.is_valid() and options.is_valid():
            spec = {"models": formset.models(), **form.spec_part(), **options.spec_part()}
            try:
                plan = pool_create(spec=spec, actor=request.user, title=title)
            except SpecError as exc:
                rows = {k: v for k, v in exc.errors.items() if k.startswith("models[")}
                for path, text in exc.errors.items():
                    if path not in rows:
                        others.append(f"{path}: {text}")
                place_engine_errors(rows, formset, others)
            else:  # a saved plan is its own audit record (core.audit: immutable snapshots)
                return redirect(plan.get_absolute_url())
        return self._render(request, form, formset, options, title=title, others=others, status=400)

    def _render(
        self,
        request: HttpRequest,
        form: MachinesStepForm,
        formset: Any,
        options: PoolOptionsForm,
        *,
        title: str,
        others: list[str] | None = None,
        status: int = 200,
    ) -> HttpResponse:
        selected = set(form["machines"].value() or []) if form.is_bound else set()
        context = {
            "form": form,
            "machines": form.machine_rows,
            "selected_hostnames": selected,
            "formset": formset,
            "options": options,
            "title": title,
            "engine_errors": others or [],
            "more_rows": min(MAX_POOL_MODELS, len(formset.forms) + 1),
            "max_models": MAX_POOL_MODELS,
        }
        return render(request, self.template_name, context, status=status)


def _rows(raw: str | None) -> int:
    """Return how many model rows a new page offers (?rows=N, bounded by the formset)."""
    try:
        return int(raw or DEFAULT_ROWS)
    except ValueError:
        return DEFAULT_ROWS


def _what_if_errors(form: PoolWhatIfForm, exc: SpecError) -> None:
    """Put each engine error on the form field it concerns (else on the form), path named."""
    for path, message in exc.errors.items():
        field = None
        if path == "hardware.machine_count":
            field = "machine_count"
        elif path.endswith(".workload.concurrency"):
            field = "concurrency"
        form.add_error(field, f"{path}: {message}")


class PoolWhatIfView(LoginRequiredMixin, View):
    """GET: place the pool again with one model removed, one model's load changed or another
    number of machines, beside the saved plan. POST: save it as a new pool plan (planners)."""

    def _evaluate(self, plan: PoolPlan, data: Any) -> tuple[PoolWhatIfForm, Any]:
        form = PoolWhatIfForm(data, models=pool_model_names(plan))
        if not form.is_valid():
            return form, None
        try:
            return form, pool_evaluate(spec=form.changed_spec(plan.spec))
        except SpecError as exc:
            _what_if_errors(form, exc)
            return form, None

    @evaluation_throttled
    def get(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        plan = get_object_or_404(PoolPlan.objects.select_related("author"), public_id=public_id)
        left = PoolResult.from_dict(plan.result)
        form, evaluation = self._evaluate(plan, request.GET)
        if evaluation is None:
            return _detail(request, plan, left, form, status=400)
        context = {
            "plan": plan,
            "what_if_form": form,
            "comparison": compare_pools(left, evaluation.result),
            "page": pool_page(evaluation.result),
            "can_write": is_planner(request.user),
        }
        return render(request, "planner/pool_what_if.html", context)

    @evaluation_throttled
    def post(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        if not is_planner(request.user):
            raise PermissionDenied(_("Saving plans requires the planner role."))
        plan = get_object_or_404(PoolPlan, public_id=public_id)
        form = PoolWhatIfForm(request.POST, models=pool_model_names(plan))
        if not form.is_valid():
            messages.error(request, _("The changed pool could not be placed."))
            return redirect(plan.get_absolute_url())
        title = _("%(title)s — what if %(changes)s") % {
            "title": plan.title,
            "changes": ", ".join(form.describe()),
        }
        try:
            new = pool_create(spec=form.changed_spec(plan.spec), actor=request.user, title=title)
        except SpecError:
            messages.error(request, _("The changed pool could not be placed."))
            return redirect(plan.get_absolute_url())
        messages.success(request, _("Saved the changed pool plan."))
        return redirect(new.get_absolute_url())
