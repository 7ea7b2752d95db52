"""Admin of decision records: read the documents; writes go through the pages and the API."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from planner.decisions.models import (
    DecisionRecord,
    DecisionRevision,
    EvidenceItem,
    Responsibility,
)


class ResponsibilityInline(admin.TabularInline):
    model = Responsibility
    fields = ["kind", "owner", "mechanism"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class EvidenceItemInline(admin.TabularInline):
    model = EvidenceItem
    fields = [
        "kind",
        "threshold",
        "measured_value",
        "unit",
        "value_source",
        "window_start",
        "window_end",
    ]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RevisionInline(admin.TabularInline):
    model = DecisionRevision
    fields = ["number", "created_at", "author_label", "action", "changed_fields"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-number"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(DecisionRecord)
class DecisionRecordAdmin(SimpleHistoryAdmin):
    """Read-only: every change must bump the version and leave a revision (services only)."""

    list_display = ["label", "title", "status", "pool_kind", "route", "model_name", "updated_at"]
    list_filter = ["status", "pool_kind", "route", "accepted_with_open_evidence"]
    search_fields = ["title", "context", "verifiable_sentence", "model_name"]
    inlines = [ResponsibilityInline, EvidenceItemInline, RevisionInline]
    list_select_related = ["plan"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in DecisionRecord._meta.fields] + ["authors"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(DecisionRevision)
class DecisionRevisionAdmin(admin.ModelAdmin):
    list_display = ["decision", "number", "created_at", "author_label", "action"]
    list_filter = ["action"]
    list_select_related = ["decision"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in DecisionRevision._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
