"""The read-only audit log page and its CSV export (admins only)."""

import csv
from collections.abc import Iterator
from datetime import datetime, time
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.audit import ACTIONS, audit_entries, audit_sources
from core.downloads import attachment
from core.roles import is_admin
from core.spreadsheet import escape_row

ACTION_LABELS = {
    "+": gettext_lazy("created"),
    "~": gettext_lazy("changed"),
    "-": gettext_lazy("deleted"),
}


class AuditFilterForm(forms.Form):
    source = forms.ChoiceField(label=gettext_lazy("What"), required=False)
    user = forms.CharField(label=gettext_lazy("Who (user name)"), required=False)
    action = forms.ChoiceField(
        label=gettext_lazy("Action"),
        required=False,
        choices=[("", gettext_lazy("any"))] + list(ACTION_LABELS.items()),
    )
    since = forms.DateField(
        label=gettext_lazy("From"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label=gettext_lazy("To (inclusive)"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["source"].choices = [("", _("everything"))] + [
            (s.key, s.verbose_name) for s in audit_sources()
        ]

    def query(self) -> dict[str, Any]:
        """Return audit_entries() keyword arguments for the valid filters."""
        data = self.cleaned_data
        kwargs: dict[str, Any] = {}
        if data.get("source"):
            kwargs["source_keys"] = [data["source"]]
        if data.get("action") in ACTIONS:
            kwargs["action"] = data["action"]
        if data.get("user"):
            user = get_user_model().objects.filter(username=data["user"]).first()
            kwargs["user_id"] = user.pk if user else -1
        tz = timezone.get_current_timezone()
        if data.get("since"):
            kwargs["since"] = datetime.combine(data["since"], time.min, tzinfo=tz)
        if data.get("until"):
            kwargs["until"] = datetime.combine(data["until"], time.max, tzinfo=tz)
        return kwargs


def _with_user_names(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids = {r["history_user_id"] for r in rows if r["history_user_id"]}
    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username"))
    for row in rows:
        row["user"] = names.get(row["history_user_id"], "")
        row["action"] = ACTION_LABELS.get(row["history_type"], row["history_type"])
    return rows


def _forbidden() -> HttpResponse:
    return HttpResponse(_("The audit log is for admins."), status=403)


def audit_log(request: HttpRequest) -> HttpResponse:
    """List who changed what and when, filterable."""
    if not is_admin(request.user):
        return _forbidden()
    form = AuditFilterForm(request.GET or None)
    entries = audit_entries(**form.query()) if form.is_valid() else audit_entries()
    page = Paginator(entries, 50).get_page(request.GET.get("page"))
    rows = _with_user_names(list(page.object_list))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page": page, "rows": rows, "query": query.urlencode()}
    return render(request, "core/audit.html", context)


class _Echo:
    def write(self, value: str) -> str:
        return value


def audit_log_csv(request: HttpRequest) -> HttpResponse:
    """Stream the filtered audit log as CSV."""
    if not is_admin(request.user):
        return _forbidden()
    form = AuditFilterForm(request.GET or None)
    entries = audit_entries(**form.query()) if form.is_valid() else audit_entries()

    def rows() -> Iterator[str]:
        writer = csv.writer(_Echo())
        yield writer.writerow(["when", "who", "action", "what", "id", "name", "reason"])
        for chunk_start in range(0, entries.count(), 1000):
            chunk = _with_user_names(list(entries[chunk_start : chunk_start + 1000]))
            for row in chunk:
                yield writer.writerow(
                    escape_row(
                        [
                            row["history_date"].isoformat(),
                            row["user"],
                            ACTIONS.get(row["history_type"], row["history_type"]),
                            row["audit_source"],
                            row["audit_object_id"],
                            row["audit_label"],
                            row["history_change_reason"] or "",
                        ]
                    )
                )

    response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = attachment("serveplan-audit.csv")
    return response
