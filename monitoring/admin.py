"""Admin for monitoring targets, alert rules and events (the token is never shown or read).

The admin validates what the API validates: targets are read-only here (the pages and the API
create and change them through monitoring.services, which guard the URL, the selector and the
kind), and an alert rule's webhook URL passes the same network guard and gets a new signing
secret, as in the API.
"""

import contextlib

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from monitoring.models import TARGET_POLL_STATE_FIELDS, AlertEvent, AlertRule, Target
from monitoring.services import alert_rule_webhook_set, target_delete
from monitoring.services.url_guard import validate_monitored_url


class WithoutTargetTokens(admin.ModelAdmin):
    """Target choices and rows without their token: one no key decrypts must not break a page."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Target:
            kwargs["queryset"] = Target.objects.defer("token")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Target)
class TargetAdmin(admin.ModelAdmin):
    """Read and delete only: creating or changing a target here skipped the services' checks
    (URL guard, selector, kind) and its default alert rules."""

    list_display = ("name", "kind", "base_url", "enabled", "last_status", "last_poll_at")
    list_filter = ("kind", "enabled", "last_status")
    search_fields = ("name", "base_url")
    readonly_fields = TARGET_POLL_STATE_FIELDS
    exclude = ("token",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

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


class AlertRuleAdminForm(forms.ModelForm):
    class Meta:
        model = AlertRule
        # Every field a user may edit (the secret and is_default are not editable).
        fields = [f.name for f in AlertRule._meta.fields if f.editable and not f.primary_key]

    def clean_webhook_url(self) -> str:
        url = (self.cleaned_data.get("webhook_url") or "").strip()
        if url:
            try:
                validate_monitored_url(url, field_name="webhook_url")
            except ValidationError as exc:
                raise ValidationError(exc.message_dict["webhook_url"]) from None
        return url


@admin.register(AlertRule)
class AlertRuleAdmin(WithoutTargetTokens):
    form = AlertRuleAdminForm
    list_display = ("name", "target", "series", "comparison", "threshold", "duration_s", "enabled")
    list_filter = ("enabled", "is_default")
    search_fields = ("name", "series")

    def save_model(self, request, obj, form, change):
        """Save the rule; a changed webhook URL gets a new signing secret, shown once."""
        super().save_model(request, obj, form, change)
        if "webhook_url" not in form.changed_data:
            return
        secret = alert_rule_webhook_set(rule=obj, url=obj.webhook_url)
        if secret:
            messages.warning(
                request,
                _("The webhook's new signing secret (shown once): %(secret)s") % {"secret": secret},
            )

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("target").defer("target__token")


@admin.register(AlertEvent)
class AlertEventAdmin(WithoutTargetTokens):
    list_display = ("message", "target", "opened_at", "resolved_at")
    list_filter = ("resolved_at",)
    list_select_related = ("target", "rule")

    def get_queryset(self, request):
        return super().get_queryset(request).defer("target__token")
