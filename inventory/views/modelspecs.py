"""Pages for the LLM model catalog, including import from a config.json."""

import json
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View
from django.views.generic import DetailView

from catalog import parameter_breakdown
from core.mixins import PlannerRequiredMixin
from inventory import selectors, services
from inventory.filters import ModelSpecFilterSet
from inventory.forms import ModelSpecForm, ModelSpecImportForm, apply_validation_error
from inventory.models import ModelSpec
from inventory.views.base import (
    InventoryListView,
    ServiceDeleteView,
    ServiceFormView,
    object_history,
)


class ModelSpecListView(InventoryListView):
    filterset_class = ModelSpecFilterSet
    template_name = "inventory/modelspec_list.html"

    def get_queryset(self) -> Any:
        return selectors.model_spec_list()


class ModelSpecDetailView(DetailView):
    model = ModelSpec
    template_name = "inventory/modelspec_detail.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        spec = self.object
        breakdown = parameter_breakdown(selectors.model_spec_architecture(spec))
        context["breakdown"] = breakdown.as_dict()
        if spec.published_total_params:
            context["published_delta_pct"] = (
                100.0
                * (spec.total_params - spec.published_total_params)
                / spec.published_total_params
            )
        context["config_pretty"] = (
            json.dumps(spec.config_json, indent=2, sort_keys=True) if spec.config_json else ""
        )
        context["history"] = object_history(spec)
        return context


class ModelSpecFormView(ServiceFormView):
    form_class = ModelSpecForm
    model = ModelSpec
    title = gettext_lazy("model spec")

    def save(self, form: Any, obj: Any) -> Any:
        if obj is None:
            return services.model_spec_create(actor=self.request.user, **form.cleaned_data)
        return services.model_spec_update(
            model_spec=obj, actor=self.request.user, **form.cleaned_data
        )


class ModelSpecDeleteView(ServiceDeleteView):
    model = ModelSpec
    success_url_name = "inventory:modelspec-list"

    def perform_delete(self, obj: Any) -> None:
        services.model_spec_delete(model_spec=obj, actor=self.request.user)


class ModelSpecImportView(PlannerRequiredMixin, View):
    """Paste or upload a Hugging Face config.json and get a ModelSpec."""

    template_name = "inventory/modelspec_import.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, self.template_name, {"form": ModelSpecImportForm()})

    def post(self, request: HttpRequest) -> HttpResponse:
        form = ModelSpecImportForm(data=request.POST, files=request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            try:
                spec = services.model_spec_import_config(
                    config=data["config"],
                    name=data["name"],
                    slug=data.get("slug") or "",
                    family=data.get("family") or "",
                    hf_repo=data.get("hf_repo") or "",
                    actor=request.user,
                )
            except ValidationError as exc:
                apply_validation_error(form, exc)
            else:
                messages.success(
                    request,
                    _("Imported %(name)s: %(params)s parameters.")
                    % {"name": spec.name, "params": f"{spec.total_params:,}"},
                )
                return HttpResponseRedirect(spec.get_absolute_url())
        return render(request, self.template_name, {"form": form}, status=400)
