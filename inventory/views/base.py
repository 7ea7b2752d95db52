"""Shared pieces of the inventory pages: filtered lists, service-backed forms, history."""

from abc import ABCMeta, abstractmethod
from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import models
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View
from django_filters.views import FilterView

from core.mixins import PlannerRequiredMixin
from inventory.forms import apply_validation_error
from inventory.services import InUseError

HISTORY_TYPES = {
    "+": gettext_lazy("created"),
    "~": gettext_lazy("changed"),
    "-": gettext_lazy("deleted"),
}


class InventoryListView(FilterView):
    """A list page filtered, searched and sorted by the model's FilterSet, 50 rows a page."""

    paginate_by = 50
    strict = False

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["total_count"] = context["paginator"].count if context.get("paginator") else None
        return context


def history_rows(records: list[Any], *, label: str = "") -> list[dict[str, Any]]:
    """Return history records (newest first) as rows with the fields each change touched."""
    rows = []
    for index, record in enumerate(records):
        changes = []
        older = records[index + 1] if index + 1 < len(records) else None
        if record.history_type == "~" and older is not None and type(older) is type(record):
            delta = record.diff_against(older)
            for change in delta.changes:
                field = record.instance_type._meta.get_field(change.field)
                changes.append({"field": field.verbose_name, "old": change.old, "new": change.new})
        rows.append(
            {
                "date": record.history_date,
                "user": record.history_user,
                "type": HISTORY_TYPES.get(record.history_type, record.history_type),
                "object": label or str(record.instance),
                "changes": changes,
            }
        )
    return rows


def object_history(obj: models.Model, limit: int = 30) -> list[dict[str, Any]]:
    """Return the history rows of one object, newest first."""
    records = list(obj.history.select_related("history_user").order_by("-history_date")[:limit])  # type: ignore[attr-defined]
    return history_rows(records, label=str(obj))


class ServiceFormView(PlannerRequiredMixin, View):
    """Create or edit one object: the form validates, a service function saves.

    Subclasses set form_class, template_name, model (for edits) and implement save().
    """

    form_class: Any = None
    template_name = "inventory/form.html"
    model: type[models.Model] | None = None
    title: Any = ""

    def get_object(self) -> models.Model | None:
        if "pk" not in self.kwargs:
            return None
        return get_object_or_404(self.model, pk=self.kwargs["pk"])

    def get_form(self, obj: models.Model | None, data: Any = None, files: Any = None) -> Any:
        return self.form_class(data=data, files=files, instance=obj)

    def save(self, form: Any, obj: models.Model | None) -> models.Model:
        """Save the valid form through the model's service (each view names its service)."""
        raise TypeError(f"{type(self).__name__} must define save()")

    def context(self, form: Any, obj: models.Model | None, **extra: Any) -> dict[str, Any]:
        return {"form": form, "object": obj, "title": self.title, **extra}

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        obj = self.get_object()
        return render(request, self.template_name, self.context(self.get_form(obj), obj))

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        obj = self.get_object()
        form = self.get_form(obj, request.POST, request.FILES)
        if form.is_valid():
            try:
                saved = self.save(form, obj)
            except ValidationError as exc:
                apply_validation_error(form, exc)
            else:
                messages.success(request, _("Saved %(object)s.") % {"object": saved})
                return HttpResponseRedirect(saved.get_absolute_url())  # type: ignore[attr-defined]
        return render(request, self.template_name, self.context(form, obj), status=400)


class ServiceDeleteView(PlannerRequiredMixin, View, metaclass=ABCMeta):
    """Confirm, then delete through a service; an object in use is refused with its users.

    The hook is perform_delete(), not delete(): View dispatches HTTP DELETE to delete().
    """

    model: type[models.Model]
    template_name = "inventory/confirm_delete.html"
    success_url_name = ""

    @abstractmethod
    def perform_delete(self, obj: Any) -> None:
        """Delete `obj` through its service (raises InUseError when something uses it)."""

    def usages(self, obj: Any) -> list[str]:
        from inventory.selectors import object_usages

        return object_usages(obj)

    def notes(self, obj: Any) -> list[str]:
        """Return the machines that leave the pool being deleted (shown before confirming)."""
        return []

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        obj = get_object_or_404(self.model, pk=kwargs["pk"])
        context = {"object": obj, "usages": self.usages(obj), "notes": self.notes(obj)}
        return render(request, self.template_name, context)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        obj = get_object_or_404(self.model, pk=kwargs["pk"])
        try:
            self.perform_delete(obj)
        except InUseError as exc:
            messages.error(
                request,
                _("%(object)s is in use and was not deleted.") % {"object": obj},
            )
            context = {"object": obj, "usages": exc.usages, "refused": True}
            return render(request, self.template_name, context, status=409)
        messages.success(request, _("Deleted %(object)s.") % {"object": obj})
        return HttpResponseRedirect(reverse(self.success_url_name))
