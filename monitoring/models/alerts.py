"""Alert rules, their state per target and series, and the events they raise."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from core.secrets import EncryptedTextField
from monitoring.models.targets import Target


class Comparison(models.TextChoices):
    GT = "gt", ">"
    GE = "ge", "≥"
    LT = "lt", "<"
    LE = "le", "≤"


class AlertRule(models.Model):
    """A condition on one series held for a duration, for one target or for all targets."""

    name = models.CharField(_("name"), max_length=120)
    target = models.ForeignKey(
        Target,
        on_delete=models.CASCADE,
        related_name="alert_rules",
        null=True,
        blank=True,
        help_text=_("Empty: the rule applies to every target."),
    )
    series = models.CharField(
        _("series"),
        max_length=200,
        help_text=_("A stored series key, e.g. vllm.kv_cache_usage_pct; its largest label set."),
    )
    comparison = models.CharField(
        _("comparison"), max_length=2, choices=Comparison.choices, default=Comparison.GT
    )
    threshold = models.FloatField(_("threshold"))
    duration_s = models.PositiveIntegerField(
        _("for (s)"), default=0, help_text=_("How long the condition must hold before opening.")
    )
    enabled = models.BooleanField(_("enabled"), default=True)
    webhook_url = models.URLField(
        _("webhook URL"),
        max_length=500,
        blank=True,
        help_text=_("Receives every opened and resolved event as JSON (same network guard)."),
    )
    # Signs each delivery (X-ServePlan-Signature, HMAC-SHA256); set with the URL by an admin,
    # shown once, encrypted at rest like target tokens.
    webhook_secret = EncryptedTextField(_("webhook secret"), blank=True, editable=False)
    is_default = models.BooleanField(_("created by default"), default=False, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    # Audited; the signing secret stays out of the history table.
    history = HistoricalRecords(excluded_fields=["webhook_secret"])

    class Meta:
        ordering = ["target_id", "name"]
        verbose_name = _("alert rule")
        verbose_name_plural = _("alert rules")

    def __str__(self) -> str:
        return f"{self.name}: {self.series} {self.get_comparison_display()} {self.threshold:g}"

    def breached(self, value: float) -> bool:
        """Return whether `value` breaks the rule's comparison."""
        match self.comparison:
            case Comparison.GT:
                return value > self.threshold
            case Comparison.GE:
                return value >= self.threshold
            case Comparison.LT:
                return value < self.threshold
            case _:
                return value <= self.threshold


class AlertState(models.Model):
    """Since when a rule has been breached on a target (pending before its duration elapses)."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="states")
    target = models.ForeignKey(Target, on_delete=models.CASCADE, related_name="alert_states")
    breaching_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rule", "target"], name="monitoring_alertstate_unique")
        ]

    def __str__(self) -> str:
        return f"{self.rule_id}/{self.target_id}: {self.breaching_since}"


class AlertEvent(models.Model):
    """An alert that opened on a target, and when it resolved."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="events")
    target = models.ForeignKey(Target, on_delete=models.CASCADE, related_name="alert_events")
    opened_at = models.DateTimeField(_("opened"))
    resolved_at = models.DateTimeField(_("resolved"), null=True, blank=True)
    value = models.FloatField(_("value when opened"))
    last_value = models.FloatField(_("last value"))
    message = models.CharField(_("message"), max_length=300)

    class Meta:
        ordering = ["-opened_at"]
        verbose_name = _("alert event")
        verbose_name_plural = _("alert events")
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "target"],
                condition=Q(resolved_at__isnull=True),
                name="monitoring_alertevent_one_open",
            )
        ]
        indexes = [models.Index(fields=["target", "-opened_at"], name="monitoring_event_target")]

    def __str__(self) -> str:
        return self.message

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None
