"""Pages of decision records: list, document, edit, actions, revisions, print and export."""

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views import View
from django.views.generic import ListView

from core.downloads import attachment
from core.mixins import PlannerRequiredMixin
from core.roles import is_planner
from inventory.models import PoolKind
from planner.decisions import selectors, services
from planner.decisions.filters import DecisionRecordFilterSet
from planner.decisions.forms import AcceptForm, DecisionForm, DiffForm, SupersedeForm
from planner.decisions.guidance import EVIDENCE_SPECS, guidance_for
from planner.decisions.markdown import export_filename, export_markdown, render_markdown
from planner.decisions.models import DecisionRecord, Status
from planner.decisions.pool_prefill import proposal_from_pool_plan
from planner.decisions.prefill import plan_estimates, proposal_from_plan
from planner.decisions.revisions import field_labels
from planner.decisions.rules import readiness
from planner.models import Plan, PoolPlan

TEXT_FIELDS = ("context", "decision_text", "alternatives", "consequences")


def document_context(decision: DecisionRecord) -> dict[str, Any]:
    """Return what the one-page document (detail and print) shows."""
    estimates = plan_estimates(decision.plan if decision.plan_id else None)
    return {
        "decision": decision,
        "html": {name: render_markdown(getattr(decision, name)) for name in TEXT_FIELDS},
        "ownership": [
            {
                "row": row,
                "guidance": guidance_for(row.kind, decision.pool_kind),
                "mechanism": render_markdown(row.mechanism),
            }
            for row in decision.ordered_responsibilities()
        ],
        "evidence": [
            {
                "item": item,
                "estimate": estimates.get(item.kind),
                "hint": EVIDENCE_SPECS[item.kind].hint,
            }
            for item in decision.ordered_evidence()
        ],
        "readiness": readiness(decision),
        "supersedes": sorted(decision.supersedes.all(), key=lambda d: d.number),
    }


class DecisionListView(ListView):
    template_name = "decisions/list.html"
    context_object_name = "decisions"
    paginate_by = 50

    def get_queryset(self) -> Any:
        self.filterset = DecisionRecordFilterSet(
            self.request.GET or None, queryset=selectors.decision_list()
        )
        return self.filterset.qs

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["filter"] = self.filterset
        context["can_write"] = is_planner(self.request.user)
        return context


class DecisionDetailView(View):
    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        context = document_context(decision)
        context["can_write"] = is_planner(request.user) and not decision.is_read_only
        context["can_supersede"] = is_planner(request.user) and decision.status == Status.ACCEPTED
        context["revision_count"] = decision.revisions.count()
        return render(request, "decisions/detail.html", context)


class DecisionPrintView(View):
    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        return render(
            request, "decisions/print.html", document_context(selectors.decision_get(number))
        )


class DecisionExportView(View):
    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        response = HttpResponse(
            export_markdown(decision), content_type="text/markdown; charset=utf-8"
        )
        response["Content-Disposition"] = attachment(export_filename(decision))
        return response


class _FormPage(PlannerRequiredMixin, View):
    template_name = "decisions/form.html"

    def render_form(
        self, request: HttpRequest, form: DecisionForm, status: int = 200, **extra: Any
    ) -> HttpResponse:
        context = {"form": form, "pool_kinds": PoolKind.choices, **extra}
        return render(request, self.template_name, context, status=status)


class DecisionCreateView(_FormPage):
    def get(self, request: HttpRequest) -> HttpResponse:
        form = DecisionForm(initial={"pool_kind": PoolKind.DEDICATED, "authors": [request.user]})
        return self.render_form(request, form)

    def post(self, request: HttpRequest) -> HttpResponse:
        form = DecisionForm(request.POST)
        if not form.is_valid():
            return self.render_form(request, form, status=400)
        try:
            decision = services.decision_create(actor=request.user, **form.service_kwargs())
        except ValidationError as exc:
            _add_errors(form, exc)
            return self.render_form(request, form, status=400)
        messages.success(request, _("%(label)s recorded.") % {"label": decision.label})
        return redirect(decision)


class _DecisionCreateFromSource(_FormPage):
    """GET: the form prefilled from a saved plan or pool plan; POST: record it, linked to it."""

    source_model: Any
    source_field: str  # the DecisionRecord field that links the source
    proposal: Callable[[Any], dict[str, Any]]  # the prefill of a source
    estimates: Callable[[Any], dict[str, float]] = staticmethod(lambda source: {})

    def get(self, request: HttpRequest, public_id: str) -> HttpResponse:
        source = get_object_or_404(self.source_model, public_id=public_id)
        proposal = self.proposal(source)
        initial: dict[str, Any] = {
            k: v for k, v in proposal.items() if k not in ("responsibilities", "estimates")
        }
        initial["authors"] = [request.user]
        for kind, row in proposal["responsibilities"].items():
            initial[f"resp_{kind}_owner"] = row["owner"]
            initial[f"resp_{kind}_mechanism"] = row["mechanism"]
        form = DecisionForm(initial=initial, estimates=proposal["estimates"])
        return self.render_form(request, form, **{self.source_field: source})

    def post(self, request: HttpRequest, public_id: str) -> HttpResponse:
        source = get_object_or_404(self.source_model, public_id=public_id)
        form = DecisionForm(request.POST, estimates=self.estimates(source))
        page = {self.source_field: source}
        if not form.is_valid():
            return self.render_form(request, form, status=400, **page)
        try:
            decision = services.decision_create(actor=request.user, **page, **form.service_kwargs())
        except ValidationError as exc:
            _add_errors(form, exc)
            return self.render_form(request, form, status=400, **page)
        messages.success(request, _("%(label)s recorded.") % {"label": decision.label})
        return redirect(decision)


class DecisionCreateFromPlanView(_DecisionCreateFromSource):
    source_model = Plan
    source_field = "plan"
    proposal = staticmethod(proposal_from_plan)
    estimates = staticmethod(plan_estimates)


class DecisionCreateFromPoolPlanView(_DecisionCreateFromSource):
    source_model = PoolPlan
    source_field = "pool_plan"
    proposal = staticmethod(proposal_from_pool_plan)


class DecisionEditView(_FormPage):
    def _refuse_read_only(self, request: HttpRequest, decision: DecisionRecord) -> HttpResponse:
        messages.error(
            request,
            _("%(label)s is superseded and read-only; edit its successor instead.")
            % {"label": decision.label},
        )
        return redirect(decision)

    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        if decision.is_read_only:
            return self._refuse_read_only(request, decision)
        form = DecisionForm(instance=decision, estimates=plan_estimates(decision.plan))
        return self.render_form(request, form, decision=decision, plan=decision.plan)

    def post(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        if decision.is_read_only:
            return self._refuse_read_only(request, decision)
        form = DecisionForm(
            request.POST, instance=decision, estimates=plan_estimates(decision.plan)
        )
        extra = {"decision": decision, "plan": decision.plan}
        if not form.is_valid():
            return self.render_form(request, form, status=400, **extra)
        expected = form.cleaned_data.get("version") or decision.version
        try:
            services.decision_update(
                decision=decision,
                actor=request.user,
                expected_version=expected,
                **form.service_kwargs(),
            )
        except services.DecisionConflict as conflict:
            # Keep the user's input, but base the next save on the version they have now seen.
            data = request.POST.copy()
            data["version"] = str(conflict.current_version)
            form = DecisionForm(data, instance=decision, estimates=plan_estimates(decision.plan))
            form.is_valid()
            return self.render_form(request, form, status=409, conflict=conflict, **extra)
        except services.DecisionReadOnly:
            return self._refuse_read_only(request, decision)
        except services.AcceptanceRefused as exc:
            for message in exc.messages:
                form.add_error(None, message)
            return self.render_form(request, form, status=400, **extra)
        except ValidationError as exc:
            _add_errors(form, exc)
            return self.render_form(request, form, status=400, **extra)
        messages.success(request, _("%(label)s saved.") % {"label": decision.label})
        return redirect(decision)


def _add_errors(form: DecisionForm, exc: ValidationError) -> None:
    if hasattr(exc, "error_dict"):
        for field, errors in exc.message_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc.messages)


class DecisionAcceptView(PlannerRequiredMixin, View):
    def _render(
        self, request: HttpRequest, decision: DecisionRecord, form: AcceptForm, **extra: Any
    ) -> HttpResponse:
        context = {"decision": decision, "readiness": readiness(decision), "form": form}
        context.update(extra)
        return render(
            request, "decisions/accept.html", context, status=400 if extra.get("refused") else 200
        )

    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        return self._render(request, decision, AcceptForm(initial={"version": decision.version}))

    def post(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        form = AcceptForm(request.POST)
        if not form.is_valid():
            return self._render(request, decision, form, refused=[_("Reload and try again.")])
        try:
            services.decision_accept(
                decision=decision,
                actor=request.user,
                with_open_evidence=form.cleaned_data["with_open_evidence"],
                expected_version=form.cleaned_data["version"],
            )
        except services.DecisionError as exc:
            decision = selectors.decision_get(number)
            fresh = AcceptForm(initial={"version": decision.version})
            return self._render(request, decision, fresh, refused=exc.messages)
        messages.success(request, _("%(label)s accepted.") % {"label": decision.label})
        return redirect(decision)


class DecisionRejectView(PlannerRequiredMixin, View):
    def post(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        try:
            services.decision_reject(decision=decision, actor=request.user)
        except services.DecisionError as exc:
            for message in exc.messages:
                messages.error(request, message)
        else:
            messages.success(request, _("%(label)s rejected.") % {"label": decision.label})
        return redirect(decision)


class DecisionSupersedeView(PlannerRequiredMixin, View):
    def _render(
        self, request: HttpRequest, decision: DecisionRecord, form: SupersedeForm, status: int = 200
    ) -> HttpResponse:
        return render(
            request, "decisions/supersede.html", {"decision": decision, "form": form}, status=status
        )

    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        form = SupersedeForm(initial={"version": decision.version}, decision=decision)
        return self._render(request, decision, form)

    def post(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        form = SupersedeForm(request.POST, decision=decision)
        if not form.is_valid():
            return self._render(request, decision, form, status=400)
        try:
            services.decision_supersede(
                decision=decision,
                superseded_by=form.cleaned_data["superseded_by"],
                actor=request.user,
                expected_version=form.cleaned_data["version"],
            )
        except services.DecisionError as exc:
            for message in exc.messages:
                form.add_error(None, message)
            return self._render(request, decision, form, status=409)
        messages.success(
            request,
            _("%(old)s is superseded by %(new)s.")
            % {"old": decision.label, "new": form.cleaned_data["superseded_by"].label},
        )
        return redirect(decision)


class DecisionSuccessorView(PlannerRequiredMixin, View):
    def post(self, request: HttpRequest, number: int) -> HttpResponseRedirect:
        decision = selectors.decision_get(number)
        successor = services.decision_draft_successor(decision=decision, actor=request.user)
        messages.success(
            request,
            _("%(new)s drafted from %(old)s. When it is ready, supersede %(old)s with it.")
            % {"new": successor.label, "old": decision.label},
        )
        return redirect("decisions:edit", number=successor.number)


class DecisionRevisionsView(View):
    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        revisions = list(decision.revisions.select_related("author").order_by("-number"))
        labels = field_labels()
        for revision in revisions:
            revision.changed_labels = [labels.get(k, k) for k in revision.changed_fields]
        return render(
            request,
            "decisions/revisions.html",
            {"decision": decision, "revisions": revisions},
        )


class DecisionDiffView(View):
    def get(self, request: HttpRequest, number: int) -> HttpResponse:
        decision = selectors.decision_get(number)
        form = DiffForm(request.GET or None)
        context: dict[str, Any] = {"decision": decision, "form": form}
        status = 200
        if form.is_valid():
            a, b = form.cleaned_data["a"], form.cleaned_data["b"]
            old, new, changes = selectors.revision_diff(decision, a, b)
            context.update({"old": old, "new": new, "changes": changes})
        elif request.GET:
            status = 400
        return render(request, "decisions/diff.html", context, status=status)
