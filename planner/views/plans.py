"""Saved plans: list, result page, what if, re-run, compare, exports."""

from __future__ import annotations

import functools
import hashlib
import uuid
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views import View
from django.views.generic import TemplateView

from core.downloads import attachment
from core.mixins import PlannerRequiredMixin
from core.roles import is_planner
from planner.engine.spec import SpecError
from planner.filters import PlanFilterSet
from planner.forms.whatif import WhatIfForm
from planner.models import Plan
from planner.presentation.changes import what_if_summary
from planner.presentation.rules import RULES
from planner.presenters import decision_url, result_context
from planner.selectors import plan_get, plan_result
from planner.services import compare_plans, compare_results, plan_evaluate, plan_rerun, plan_save
from planner.services.bundles import BUNDLE_VARIANT_KEYS, BundleUnavailable, candidate_bundles
from planner.services.exports import plan_archive, plan_json, plan_markdown
from planner.throttles import evaluation_throttled

PAGE_SIZE = 25


class PlanListView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest) -> HttpResponse:
        qs = Plan.objects.with_author().defer("spec", "engine_input", "result")
        filterset = PlanFilterSet(request.GET or None, queryset=qs)
        page = Paginator(filterset.qs, PAGE_SIZE).get_page(request.GET.get("page"))
        query = request.GET.copy()
        query.pop("page", None)
        return render(
            request,
            "planner/plan_list.html",
            {
                "filter": filterset,
                "page": page,
                "plans": page.object_list,
                "query": query.urlencode(),
            },
        )


RESULT_TEMPLATE = "planner/partials/result.html"
RESULT_DETAILS_TEMPLATE = "planner/partials/result_details.html"
# A saved plan's result never changes, so its section renders once per language and serves
# every reader (it holds nothing of the user's: no form, no token). Kept this long so that a
# deployment's changed templates or presenters show within minutes.
RESULT_HTML_KEEP_S = 600


def _result_html(request: HttpRequest, plan: Plan, result: Any) -> tuple[str, str]:
    """Return the plan's rendered result: the answers on top (Ray, layout, routes, risks) and
    the folded details, from the shared cache when they are there."""
    key = f"planner:result-html:{plan.public_id}:{get_language()}:{_templates_digest()}"
    parts = cache.get(key)
    if parts is None:
        context = {"plan": plan, **result_context(result, engine_input=plan.engine_input)}
        parts = tuple(
            render_to_string(name, context, request=request)
            for name in (RESULT_TEMPLATE, RESULT_DETAILS_TEMPLATE)
        )
        cache.set(key, parts, timeout=RESULT_HTML_KEEP_S)
    top, details = parts
    return mark_safe(top), mark_safe(details)  # noqa: S308 - our own templates, autoescaped


@functools.cache
def _templates_digest() -> str:
    """A digest of the result section's templates: a deployment that changes one renders anew."""
    digest = hashlib.sha256()
    for path in sorted((settings.BASE_DIR / "templates" / "planner" / "partials").glob("*.html")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _detail_context(
    request: HttpRequest, plan: Plan, what_if_form: WhatIfForm | None = None
) -> dict[str, Any]:
    """Return the plan page's context (the what-if form bound when its answers were refused)."""
    result = plan_result(plan)
    top, details = _result_html(request, plan, result)
    return {
        "plan": plan,
        "rec": result.recommendation,
        "result_html": top,
        "result_details_html": details,
        "what_if_form": what_if_form or WhatIfForm(),
        "decision_url": decision_url(plan.public_id),
        "can_write": is_planner(request.user),
        "candidate_bundles": candidate_bundles(result, plan.pool_kind),
        "bundle_variant_keys": BUNDLE_VARIANT_KEYS,
    }


class PlanDetailView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        return render(
            request, "planner/plan_detail.html", _detail_context(request, plan_get(public_id))
        )


class PlanWhatIfView(LoginRequiredMixin, View):
    """GET: evaluate the plan with the changed answers, beside the original. POST: save it."""

    def _evaluate(self, request: HttpRequest, plan: Plan, data: Any) -> Any:
        form = WhatIfForm(data)
        if not form.is_valid():
            return form, None, None
        spec = form.changed_spec(plan.spec)
        try:
            return form, spec, plan_evaluate(spec=spec)
        except SpecError as exc:
            for path, message in exc.errors.items():
                field = path if path in form.fields else None
                if path == "workload.concurrency":
                    field = "concurrency"
                form.add_error(field, f"{path}: {message}")
            return form, spec, None

    @evaluation_throttled
    def get(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        plan = plan_get(public_id)
        form, spec, evaluation = self._evaluate(request, plan, request.GET)
        if evaluation is None:
            context = _detail_context(request, plan, form)
            return render(request, "planner/plan_detail.html", context, status=400)
        left_result = plan_result(plan)
        comparison = compare_results(
            left_result=left_result,
            right_result=evaluation.result,
            left_spec=plan.spec,
            right_spec=spec,
        )
        context: dict[str, Any] = {
            "plan": plan,
            "what_if_form": form,
            "can_write": is_planner(request.user),
        }
        context.update(
            left=result_context(left_result, prefix="left-", engine_input=plan.engine_input),
            right=result_context(
                evaluation.result, prefix="right-", engine_input=evaluation.engine_input
            ),
            comparison=comparison,
            summary=what_if_summary(
                plan=plan,
                spec=spec,
                evaluation=evaluation,
                comparison=comparison,
                requested=form.requested_answers(),
            ),
            query=request.GET.urlencode(),
        )
        return render(request, "planner/what_if.html", context)

    @evaluation_throttled
    def post(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        if not is_planner(request.user):
            raise PermissionDenied(_("Saving plans requires the planner role."))
        plan = plan_get(public_id)
        form, _spec, evaluation = self._evaluate(request, plan, request.POST)
        if evaluation is None:
            messages.error(request, _("The changed plan could not be evaluated."))
            return redirect(plan.get_absolute_url())
        changes = ", ".join(f"{label}: {value}" for label, value in form.describe())
        title = _("%(title)s — what if %(changes)s") % {"title": plan.title, "changes": changes}
        new = plan_save(evaluation=evaluation, actor=request.user, title=title[:200])
        messages.success(request, _("Saved the changed plan."))
        return redirect(new.get_absolute_url())


class PlanRerunView(PlannerRequiredMixin, View):
    @evaluation_throttled
    def post(self, request: HttpRequest, public_id: uuid.UUID) -> HttpResponse:
        plan = plan_get(public_id)
        try:
            new = plan_rerun(plan=plan, actor=request.user)
        except SpecError as exc:
            details = "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
            messages.error(
                request, _("This plan cannot be re-run: %(details)s") % {"details": details}
            )
            return redirect(plan.get_absolute_url())
        messages.success(request, _("Re-ran with the current engine; differences are highlighted."))
        return redirect(f"/plans/compare/?a={plan.public_id}&b={new.public_id}")


class PlanCompareView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest) -> HttpResponse:
        ids = [v for v in request.GET.getlist("plan") if v] or [
            request.GET.get("a", ""),
            request.GET.get("b", ""),
        ]
        try:
            left_id, right_id = (uuid.UUID(v) for v in ids[:2])
        except ValueError:
            messages.error(request, _("Pick exactly two plans to compare."))
            return redirect("planner:plan-list")
        left, right = plan_get(left_id), plan_get(right_id)
        context = {
            "left_plan": left,
            "right_plan": right,
            "left": result_context(
                plan_result(left), prefix="left-", engine_input=left.engine_input
            ),
            "right": result_context(
                plan_result(right), prefix="right-", engine_input=right.engine_input
            ),
            "comparison": compare_plans(left, right),
        }
        return render(request, "planner/compare.html", context)


class PlanExportView(LoginRequiredMixin, View):
    def get(self, request: HttpRequest, public_id: uuid.UUID, fmt: str) -> HttpResponse:
        plan = plan_get(public_id)
        if fmt == "md":
            response = HttpResponse(
                plan_markdown(plan), content_type="text/markdown; charset=utf-8"
            )
        elif fmt == "json":
            response = JsonResponse(
                plan_json(plan), json_dumps_params={"indent": 2, "ensure_ascii": False}
            )
        elif fmt == "zip":
            try:
                archive, name = plan_archive(
                    plan,
                    request.GET.get("candidate", ""),
                    request.GET.get("variant", ""),
                    serveplan_url=request.build_absolute_uri("/"),
                )
            except BundleUnavailable as exc:
                return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
            response = HttpResponse(archive, content_type="application/zip")
            response["Content-Disposition"] = attachment(name)
            return response
        else:
            raise Http404(fmt)
        name = f"serveplan-{plan.public_id}.{fmt}"
        response["Content-Disposition"] = attachment(name)
        return response


class RulesView(LoginRequiredMixin, TemplateView):
    template_name = "planner/rules.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["rules"] = [
            {"anchor": rule.value, "heading": heading, "text": text}
            for rule, (heading, text) in RULES.items()
        ]
        return context
