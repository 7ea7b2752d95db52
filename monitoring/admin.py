"""Admin for monitoring targets, alert rules and events (the token is never shown)."""

from django.contrib import admin

from monitoring.models import TARGET_POLL_STATE_FIELDS, AlertEvent, AlertRule, Target


@admin.register(Target)
class TargetAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "base_url", "enabled", "last_status", "last_poll_at")
    list_filter = ("kind", "enabled", "last_status")
    search_fields = ("name", "base_url")
    readonly_fields = TARGET_POLL_STATE_FIELDS
    exclude = ("token",)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("token")


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    list_display = ("name", "target", "series", "comparison", "threshold", "duration_s", "enabled")
    list_filter = ("enabled", "is_default")
    search_fields = ("name", "series")


@admin.register(AlertEvent)
class AlertEventAdmin(admin.ModelAdmin):
    list_display = ("message", "target", "opened_at", "resolved_at")
    list_filter = ("resolved_at",)
    list_select_related = ("target", "rule")
