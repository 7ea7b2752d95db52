"""The five-step planning wizard and its live side panel.

Every step is a plain HTML form (it works without JavaScript); static/planner/wizard.js only
refreshes the side panel as answers change, by POSTing the form to `wizard-preview`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views import View

from core.mixins import PlannerRequiredMixin
from planner.engine.spec import SpecError
from planner.forms.draft import STEP_BY_SLUG, STEPS, Draft, Step, locate_engine_error, raw_from_post
from planner.forms.wizard import OPERATION_QUESTIONS
from planner.presentation.ray_answer import ray_answer
from planner.presentation.shown import shown_speed
from planner.services import plan_evaluate, plan_save
from planner.throttles import evaluation_wait_s, too_many_evaluations_message

ENGINE_ERRORS_KEY = "planner_wizard_engine_errors"


def _step(slug: str) -> Step:
    try:
        return STEP_BY_SLUG[slug]
    except KeyError:
        raise Http404(slug) from None


def side_panel_context(request: HttpRequest, draft: Draft) -> dict[str, Any]:
    """Return what the live side panel shows for the answers so far.

    Each evaluation counts against the user's plan-evaluation limit; past it, the panel says so
    (`throttled`) instead of evaluating.
    """
    spec, invalid = draft.spec()
    panel: dict[str, Any] = {
        "invalid_steps": list(invalid),
        "errors": {},
        "evaluation": None,
        "throttled": "",
    }
    wait_s = evaluation_wait_s(request)
    if wait_s is not None:
        panel.update(throttled=too_many_evaluations_message(wait_s), retry_after_s=wait_s)
        return panel
    try:
        evaluation = plan_evaluate(spec=spec)
    except SpecError as exc:
        panel["errors"] = exc.errors
        return panel
    result = evaluation.result
    best = result.best
    memory = best.memory if best else None
    bars = []
    if memory is not None:
        requested = memory.requested_gib or 1.0
        for label, css, gib in (
            (_("weights"), "weights", memory.weights_gib),
            (_("activation"), "activation", memory.activation_peak_gib),
            # Non-torch memory and CUDA graphs together, as the memory chart shows them.
            (_("overhead"), "overhead", memory.non_torch_gib + memory.cuda_graph_gib),
            (_("KV cache"), "kv", memory.kv_budget_gib),
        ):
            gib = max(0.0, gib)
            bars.append(
                {"label": label, "css": css, "gib": gib, "pct": min(100.0, 100 * gib / requested)}
            )
    panel.update(
        evaluation=evaluation,
        result=result,
        rec=result.recommendation,
        best=best,
        memory=memory,
        bars=bars,
        max_model_len=result.model.max_model_len,
        model_name=result.model.name,
        # The figures the plan page will show: the serving model's, whole sequences, and the
        # answer to "Do we need Ray?".
        speed=shown_speed(best, result),
        sequences_per_replica=int(best.max_concurrency_per_replica + 1e-9) if best else 0,
        sequences_total=int(best.max_concurrency_total + 1e-9) if best else 0,
        ray=ray_answer(result),
    )
    return panel


class WizardStartView(PlannerRequiredMixin, View):
    """Start the wizard (?reset=1 forgets the draft) at step 1."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if request.GET.get("reset"):
            Draft.clear(request)
            request.session.pop(ENGINE_ERRORS_KEY, None)
        return redirect("planner:wizard-step", step="model")


class WizardStepView(PlannerRequiredMixin, View):
    template_name = "planner/wizard/step.html"

    def get(self, request: HttpRequest, step: str) -> HttpResponse:
        current = _step(step)
        draft = Draft.load(request)
        form = draft.form(current)
        engine_errors = (request.session.get(ENGINE_ERRORS_KEY) or {}).get(current.slug) or []
        if engine_errors:
            form = draft.form(current, bound=True)
            form.is_valid()
            for field_name, message in engine_errors:
                form.add_error(field_name if field_name in form.fields else None, message)
        return self.render_step(request, current, draft, form)

    def post(self, request: HttpRequest, step: str) -> HttpResponse:
        current = _step(step)
        draft = Draft.load(request)
        draft.update(current, raw_from_post(current, request.POST))
        draft.save(request)
        errors = request.session.get(ENGINE_ERRORS_KEY) or {}
        if errors.pop(current.slug, None) is not None:
            request.session[ENGINE_ERRORS_KEY] = errors
        action = request.POST.get("action", "next")
        index = current.number - 1
        if action == "back":
            return redirect("planner:wizard-step", step=STEPS[max(0, index - 1)].slug)
        if action.startswith("goto:"):
            return redirect("planner:wizard-step", step=_step(action[5:]).slug)
        form = draft.form(current, bound=True)
        if action == "refresh" or not form.is_valid():
            return self.render_step(request, current, draft, form, status=200)
        if index + 1 < len(STEPS) and action != "finish":
            return redirect("planner:wizard-step", step=STEPS[index + 1].slug)
        return self.finish(request, draft)

    def finish(self, request: HttpRequest, draft: Draft) -> HttpResponse:
        spec, invalid = draft.spec()
        if invalid:
            first = next(s for s in STEPS if s.slug in invalid)
            messages.error(request, _("Please correct the answers of this step first."))
            draft.data.setdefault(first.slug, draft.values(first))
            draft.save(request)
            return redirect("planner:wizard-step", step=first.slug)
        wait_s = evaluation_wait_s(request)
        if wait_s is not None:
            # Nothing is saved: the answers stay in the draft for a later finish.
            messages.error(request, too_many_evaluations_message(wait_s))
            last = STEPS[-1]
            response = self.render_step(request, last, draft, draft.form(last), status=429)
            response["Retry-After"] = str(wait_s)
            return response
        try:
            evaluation = plan_evaluate(spec=spec)
        except SpecError as exc:
            by_step: dict[str, list[tuple[str | None, str]]] = {}
            for path, message in exc.errors.items():
                step_slug, field_name = locate_engine_error(path)
                by_step.setdefault(step_slug, []).append((field_name, f"{path}: {message}"))
                draft.data.setdefault(step_slug, draft.values(STEP_BY_SLUG[step_slug]))
            draft.save(request)
            request.session[ENGINE_ERRORS_KEY] = by_step
            first = next(s for s in STEPS if s.slug in by_step)
            messages.error(request, _("The planner cannot use these answers yet; see below."))
            return redirect("planner:wizard-step", step=first.slug)
        plan = plan_save(evaluation=evaluation, actor=request.user)
        messages.success(request, _("Plan saved. Share its address with your team."))
        return redirect(plan.get_absolute_url())

    def render_step(
        self, request: HttpRequest, current: Step, draft: Draft, form: Any, status: int = 200
    ) -> HttpResponse:
        context = {
            "steps": STEPS,
            "step": current,
            "form": form,
            "is_last": current.number == len(STEPS),
            "prev_step": STEPS[current.number - 2] if current.number > 1 else None,
            "preview_url": reverse("planner:wizard-preview", kwargs={"step": current.slug}),
            "machines": draft.machine_rows() if current.slug == "machines" else [],
            "questions": OPERATION_QUESTIONS,
            "answered": [s.slug for s in STEPS if draft.has(s)],
            **side_panel_context(request, draft),
        }
        if current.slug == "machines":
            value = form["machines"].value() or []
            context["selected_hostnames"] = set(value if isinstance(value, list) else [value])
        return render(request, self.template_name, context, status=status)


class WizardPreviewView(PlannerRequiredMixin, View):
    """Return the side panel (HTML fragment) for the step's current answers, and keep them."""

    def post(self, request: HttpRequest, step: str) -> HttpResponse:
        current = _step(step)
        draft = Draft.load(request)
        draft.update(current, raw_from_post(current, request.POST))
        draft.save(request)
        panel = side_panel_context(request, draft)
        if not panel["throttled"]:
            return render(request, "planner/wizard/side_panel.html", panel)
        response = render(request, "planner/wizard/side_panel.html", panel, status=429)
        response["Retry-After"] = str(panel["retry_after_s"])
        return response
