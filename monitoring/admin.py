"""Admin for monitoring targets, alert rules and events (the token is never shown or read)."""

import contextlib

from django.contrib import admin

from monitoring.models import TARGET_POLL_STATE_FIELDS, AlertEvent, AlertRule, Target
from monitoring.services import target_delete


class WithoutTargetTokens(admin.ModelAdmin):
    """Target choices and rows without their token: one no key decrypts must not break a page."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Target:
            kwargs["queryset"] = Target.objects.defer("token")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Target)
class TargetAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "base_url", "enabled", "last_status", "last_poll_at")
    list_filter = ("kind", "enabled", "last_status")
    search_fields = ("name", "base_url")
    readonly_fields = TARGET_POLL_STATE_FIELDS
    exclude = ("token",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("token")

    # Deleted as everywhere else (monitoring.services.target_delete): the row locked against a
    # poll or spooled write under way, and its series deleted on a time-series server too.
    def delete_model(self, request, obj):
        with contextlib.suppress(Target.DoesNotExist):  # another delete took it first
            target_delete(target=obj)

    def delete_queryset(self, request, queryset):
        for target in queryset.defer("token"):
            self.delete_model(request, target)


@admin.register(AlertRule)
class AlertRuleAdmin(WithoutTargetTokens):
    list_display = ("name", "target", "series", "comparison", "threshold", "duration_s", "enabled")
    list_filter = ("enabled", "is_default")
    search_fields = ("name", "series")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("target").defer("target__token")


@admin.register(AlertEvent)
class AlertEventAdmin(WithoutTargetTokens):
    list_display = ("message", "target", "opened_at", "resolved_at")
    list_filter = ("resolved_at",)
    list_select_related = ("target", "rule")

    def get_queryset(self, request):
        return super().get_queryset(request).defer("target__token")
