"""The monitoring allowlist page: admins widen where pollers and webhooks may connect."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View

from core.mixins import AdminRequiredMixin
from monitoring import services
from monitoring.forms import apply_errors
from monitoring.models import AllowlistEntry
from monitoring.targets import reach


class AllowlistEntryForm(forms.Form):
    name = forms.CharField(
        label=gettext_lazy("Address, network or host name"),
        max_length=253,
        help_text=AllowlistEntry._meta.get_field("name").help_text,
    )
    note = forms.CharField(label=gettext_lazy("Note"), max_length=200, required=False)


class AllowlistView(AdminRequiredMixin, View):
    template_name = "monitoring/allowlist.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request, AllowlistEntryForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = AllowlistEntryForm(request.POST)
        if form.is_valid():
            try:
                entry = services.allowlist_entry_create(**form.cleaned_data)
            except ValidationError as exc:
                apply_errors(form, exc)
            else:
                messages.success(request, _("%(name)s added to the allowlist.") % {"name": entry})
                return HttpResponseRedirect(reverse("monitoring:allowlist"))
        return self._render(request, form, status=400)

    def _render(self, request: HttpRequest, form: forms.Form, status: int = 200) -> HttpResponse:
        context = {
            "form": form,
            "entries": AllowlistEntry.objects.all(),
            "inventory_hosts": sorted(set(reach.inventory_hosts())),
        }
        return render(request, self.template_name, context, status=status)


class AllowlistEntryDeleteView(AdminRequiredMixin, View):
    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        entry = get_object_or_404(AllowlistEntry, pk=pk)
        services.allowlist_entry_delete(entry=entry)
        messages.success(request, _("%(name)s removed from the allowlist.") % {"name": entry})
        return HttpResponseRedirect(reverse("monitoring:allowlist"))
