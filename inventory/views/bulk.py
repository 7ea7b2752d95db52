"""Bulk machine import (upload, preview, confirm) and export."""

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views import View

from core.downloads import attachment
from core.mixins import PlannerRequiredMixin
from inventory import bulk, selectors
from inventory.filters import MachineFilterSet
from inventory.forms import MachineImportForm
from inventory.models import MACHINE_FIELDS, ImportFormat, MachineImportBatch


class MachineImportView(PlannerRequiredMixin, View):
    """Upload a file; it is parsed and stored, then previewed under its token."""

    template_name = "inventory/machine_import.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, self.template_name, {"form": MachineImportForm()})

    def post(self, request: HttpRequest) -> HttpResponse:
        form = MachineImportForm(data=request.POST, files=request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            upload = data["file"]
            try:
                rows = bulk.parse_file(upload.read(), data["file_format"])
            except bulk.ImportFileError as exc:
                form.add_error("file", str(exc))
            else:
                batch = bulk.store_upload(
                    rows=rows,
                    file_format=data["file_format"],
                    filename=upload.name,
                    update_existing=data["update_existing"],
                    actor=request.user,
                )
                return HttpResponseRedirect(
                    reverse("inventory:machine-import-preview", kwargs={"token": batch.token})
                )
        return render(request, self.template_name, {"form": form}, status=400)


class MachineImportPreviewView(PlannerRequiredMixin, View):
    """Show every row with its per-field errors; confirming applies the stored rows."""

    template_name = "inventory/machine_import_preview.html"

    def _batch(self, token: Any) -> MachineImportBatch:
        return get_object_or_404(MachineImportBatch, token=token, applied_at__isnull=True)

    def _render(self, request: HttpRequest, batch: MachineImportBatch, status: int = 200):
        preview = bulk.validate_rows(batch.rows, update_existing=batch.update_existing)
        columns = [*MACHINE_FIELDS, "nics"]
        table = []
        for row in preview.rows:
            cells = []
            for column in columns:
                value = row.data.get(column, "")
                if column == "nics":
                    value = bulk.format_nics_cell(row.nics) if row.nics else value
                cells.append({"value": value, "errors": row.errors.get(column, [])})
            table.append({"row": row, "cells": cells, "general": row.errors.get("__all__", [])})
        context = {"batch": batch, "preview": preview, "columns": columns, "table": table}
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest, token: Any) -> HttpResponse:
        return self._render(request, self._batch(token))

    def post(self, request: HttpRequest, token: Any) -> HttpResponse:
        batch = self._batch(token)
        try:
            preview = bulk.apply_rows(
                batch.rows, update_existing=batch.update_existing, actor=request.user
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
            return self._render(request, batch, status=400)
        batch.applied_at = timezone.now()
        batch.applied_count = len(preview.rows)
        batch.save(update_fields=["applied_at", "applied_count"])
        messages.success(
            request, _("Imported %(count)s machines.") % {"count": batch.applied_count}
        )
        return HttpResponseRedirect(reverse("inventory:fleet-summary"))


class MachineExportView(View):
    """Download the (filtered) machines with their NICs as CSV or YAML."""

    def get(self, request: HttpRequest, fmt: str) -> HttpResponse:
        if fmt not in ImportFormat.values:
            raise Http404(_("Export formats: csv, yaml."))
        machines = MachineFilterSet(request.GET, queryset=selectors.machine_queryset()).qs
        stamp = timezone.now().strftime("%Y%m%d-%H%M")
        if fmt == ImportFormat.YAML:
            body, content_type, ext = bulk.export_yaml(machines), "application/yaml", "yaml"
        else:
            body, content_type, ext = bulk.export_csv(machines), "text/csv", "csv"
        response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
        response["Content-Disposition"] = attachment(f"machines-{stamp}.{ext}")
        return response
