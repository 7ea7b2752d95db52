"""Pages for GPU types, pools and machines."""

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views import View
from django.views.generic import DetailView

from core.mixins import PlannerRequiredMixin
from inventory import selectors, services
from inventory.demo import demo_machines, demo_remove
from inventory.filters import GpuTypeFilterSet, MachineFilterSet, PoolFilterSet
from inventory.forms import (
    NIC_FIELDS,
    GpuTypeForm,
    MachineForm,
    NicFormSet,
    PoolForm,
    apply_validation_error,
)
from inventory.models import MACHINE_FIELDS, GpuType, Machine, NetworkInterface, Pool
from inventory.views.base import (
    InventoryListView,
    ServiceDeleteView,
    ServiceFormView,
    history_rows,
    object_history,
)

# GPU types ---------------------------------------------------------------------------------


class GpuTypeListView(InventoryListView):
    filterset_class = GpuTypeFilterSet
    template_name = "inventory/gputype_list.html"

    def get_queryset(self) -> Any:
        return selectors.gpu_type_list()


class GpuTypeDetailView(DetailView):
    model = GpuType
    template_name = "inventory/gputype_detail.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        machines = self.object.machines.select_related("pool").order_by("hostname")
        context["machines"] = machines[:200]
        context["history"] = object_history(self.object)
        return context


class GpuTypeFormView(ServiceFormView):
    form_class = GpuTypeForm
    model = GpuType
    title = gettext_lazy("GPU type")

    def save(self, form: Any, obj: Any) -> Any:
        if obj is None:
            return services.gpu_type_create(actor=self.request.user, **form.cleaned_data)
        return services.gpu_type_update(gpu_type=obj, actor=self.request.user, **form.cleaned_data)


class GpuTypeDeleteView(ServiceDeleteView):
    model = GpuType
    success_url_name = "inventory:gputype-list"

    def perform_delete(self, obj: Any) -> None:
        services.gpu_type_delete(gpu_type=obj, actor=self.request.user)


# Pools -------------------------------------------------------------------------------------


class PoolListView(InventoryListView):
    filterset_class = PoolFilterSet
    template_name = "inventory/pool_list.html"

    def get_queryset(self) -> Any:
        return selectors.pool_list()


class PoolDetailView(DetailView):
    model = Pool
    template_name = "inventory/pool_detail.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["machines"] = selectors.machine_list(pool_id=self.object.pk)
        context["history"] = object_history(self.object)
        return context


class PoolFormView(ServiceFormView):
    form_class = PoolForm
    model = Pool
    title = gettext_lazy("pool")

    def save(self, form: Any, obj: Any) -> Any:
        if obj is None:
            return services.pool_create(actor=self.request.user, **form.cleaned_data)
        return services.pool_update(pool=obj, actor=self.request.user, **form.cleaned_data)


class PoolDeleteView(ServiceDeleteView):
    model = Pool
    success_url_name = "inventory:pool-list"

    def usages(self, obj: Any) -> list[str]:
        return []  # machines simply leave the pool

    def notes(self, obj: Any) -> list[str]:
        # Shown as "Machines → no pool: host, host": these machines stay, without a pool.
        return list(obj.machines.values_list("hostname", flat=True))

    def perform_delete(self, obj: Any) -> None:
        services.pool_delete(pool=obj, actor=self.request.user)


# Machines ----------------------------------------------------------------------------------


class MachineListView(InventoryListView):
    filterset_class = MachineFilterSet
    template_name = "inventory/machine_list.html"

    def get_queryset(self) -> Any:
        return selectors.machine_queryset()

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["rows"] = [
            (machine, selectors.fastest_data_nic(machine)) for machine in context["object_list"]
        ]
        context["demo_count"] = demo_machines().count()
        return context


class DemoRemoveView(PlannerRequiredMixin, View):
    """Remove the demo machines (and the demo pools they leave empty) in one step."""

    def post(self, request: HttpRequest) -> HttpResponse:
        removed = demo_remove(actor=request.user)
        messages.success(
            request,
            ngettext("Removed %(n)s demo machine.", "Removed %(n)s demo machines.", removed)
            % {"n": removed},
        )
        return HttpResponseRedirect(reverse("inventory:machine-list"))


class MachineDetailView(DetailView):
    template_name = "inventory/machine_detail.html"

    def get_queryset(self) -> Any:
        return selectors.machine_queryset()

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        machine = self.object
        context["nics"] = list(machine.nics.all())
        context["fastest_data_nic"] = selectors.fastest_data_nic(machine)
        context["gpu_memory_gib"] = machine.gpu_count * machine.gpu_type.memory_gib
        context["history"] = object_history(machine)
        nic_records = list(
            NetworkInterface.history.filter(machine_id=machine.pk)
            .select_related("history_user")
            .order_by("name", "-history_date")[:100]
        )
        by_name: dict[str, list[Any]] = {}
        for record in nic_records:
            by_name.setdefault(record.name, []).append(record)
        nic_history = [row for records in by_name.values() for row in history_rows(records)]
        context["nic_history"] = sorted(nic_history, key=lambda r: r["date"], reverse=True)
        return context


class MachineFormView(ServiceFormView):
    """Machine fields and its NICs on one page."""

    form_class = MachineForm
    model = Machine
    template_name = "inventory/machine_form.html"
    title = gettext_lazy("machine")

    def _formset(self, obj: Any, data: Any = None) -> Any:
        return NicFormSet(data=data, instance=obj or Machine(), prefix="nics")

    def _copy_of(self, request: HttpRequest) -> Machine | None:
        """Return the machine a new one duplicates (?like=<pk>), or None."""
        like = request.GET.get("like", "")
        if not like.isdigit() or "pk" in self.kwargs:
            return None
        return Machine.objects.prefetch_related("nics").filter(pk=int(like)).first()

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        obj = self.get_object()
        like = self._copy_of(request)
        if like is not None:
            # A duplicate: every field and NIC of the original, a hostname of its own to type.
            initial = {f: getattr(like, f) for f in MACHINE_FIELDS if f != "hostname"}
            form = self.form_class(initial=initial)
            nics = [{k: getattr(n, k) for k in NIC_FIELDS} for n in like.nics.all()]
            formset = NicFormSet(instance=Machine(), prefix="nics", initial=nics)
            formset.extra = max(formset.extra, len(nics))
            context = self.context(form, None, formset=formset, duplicate_of=like)
            return render(request, self.template_name, context)
        context = self.context(self.get_form(obj), obj, formset=self._formset(obj))
        return render(request, self.template_name, context)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        obj = self.get_object()
        form = self.get_form(obj, request.POST)
        formset = self._formset(obj, request.POST)
        form_ok, formset_ok = form.is_valid(), formset.is_valid()
        if form_ok and formset_ok:
            nics = [
                {k: f.cleaned_data[k] for k in ("name", "speed_gbps", "kind", "role")}
                for f in formset.forms
                if f.has_changed() or f.instance.pk
                if f.cleaned_data and not f.cleaned_data.get("DELETE")
            ]
            try:
                if obj is None:
                    saved = services.machine_create(
                        actor=request.user, nics=nics, **form.cleaned_data
                    )
                else:
                    saved = services.machine_update(
                        machine=obj, actor=request.user, nics=nics, **form.cleaned_data
                    )
            except ValidationError as exc:
                apply_validation_error(form, exc)
            else:
                messages.success(request, _("Saved %(object)s.") % {"object": saved})
                return HttpResponseRedirect(saved.get_absolute_url())
        context = self.context(form, obj, formset=formset)
        return render(request, self.template_name, context, status=400)


class MachineDeleteView(ServiceDeleteView):
    model = Machine
    success_url_name = "inventory:machine-list"

    def perform_delete(self, obj: Any) -> None:
        services.machine_delete(machine=obj, actor=self.request.user)
