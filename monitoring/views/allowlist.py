"""The monitoring allowlist page: admins widen where pollers and webhooks may connect, and
which Prometheus jobs read-only targets may read (the selector policy)."""

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
from monitoring.models import AllowedJob, AllowlistEntry
from monitoring.targets import reach


class AllowlistEntryForm(forms.Form):
    name = forms.CharField(
        label=gettext_lazy("Address, network or host name"),
        max_length=253,
        help_text=AllowlistEntry._meta.get_field("name").help_text,
    )
    note = forms.CharField(label=gettext_lazy("Note"), max_length=200, required=False)


class AllowedJobForm(forms.Form):
    name = forms.CharField(
        label=gettext_lazy("Prometheus job"),
        max_length=200,
        help_text=AllowedJob._meta.get_field("name").help_text,
    )
    note = forms.CharField(label=gettext_lazy("Note"), max_length=200, required=False)


class AllowlistView(AdminRequiredMixin, View):
    template_name = "monitoring/allowlist.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return render_allowlist(request)

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
        return render_allowlist(request, form=form, status=400)


def render_allowlist(
    request: HttpRequest,
    *,
    form: forms.Form | None = None,
    job_form: forms.Form | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "form": form or AllowlistEntryForm(),
        "entries": AllowlistEntry.objects.all(),
        "inventory_hosts": sorted(set(reach.inventory_hosts())),
        "job_form": job_form or AllowedJobForm(),
        "jobs": AllowedJob.objects.all(),
    }
    return render(request, AllowlistView.template_name, context, status=status)


class AllowlistEntryDeleteView(AdminRequiredMixin, View):
    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        entry = get_object_or_404(AllowlistEntry, pk=pk)
        services.allowlist_entry_delete(entry=entry)
        messages.success(request, _("%(name)s removed from the allowlist.") % {"name": entry})
        return HttpResponseRedirect(reverse("monitoring:allowlist"))


class AllowedJobCreateView(AdminRequiredMixin, View):
    def post(self, request: HttpRequest) -> HttpResponse:
        form = AllowedJobForm(request.POST)
        if form.is_valid():
            try:
                job = services.allowed_job_create(**form.cleaned_data)
            except ValidationError as exc:
                apply_errors(form, exc)
            else:
                messages.success(
                    request, _("Read-only targets may now read the job %(name)s.") % {"name": job}
                )
                return HttpResponseRedirect(reverse("monitoring:allowlist"))
        return render_allowlist(request, job_form=form, status=400)


class AllowedJobDeleteView(AdminRequiredMixin, View):
    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        job = get_object_or_404(AllowedJob, pk=pk)
        services.allowed_job_delete(job=job)
        messages.success(request, _("The job %(name)s is no longer allowed.") % {"name": job})
        return HttpResponseRedirect(reverse("monitoring:allowlist"))
