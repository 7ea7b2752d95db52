"""A load benchmark run against a monitored server, with its configuration and results."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords


class RunStatus(models.TextChoices):
    QUEUED = "queued", _("queued")
    RUNNING = "running", _("running")
    SUCCEEDED = "succeeded", _("succeeded")
    FAILED = "failed", _("failed")
    CANCELLED = "cancelled", _("cancelled")


ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)


class BenchmarkRun(models.Model):
    """One benchmark: a level or a concurrency sweep against one target's endpoint."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    target = models.ForeignKey(
        "monitoring.Target",
        on_delete=models.SET_NULL,
        null=True,
        related_name="benchmark_runs",
        verbose_name=_("target"),
    )
    target_name = models.CharField(_("target name"), max_length=100)
    plan = models.ForeignKey(
        "planner.Plan",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="benchmark_runs",
        verbose_name=_("plan"),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("started by"),
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    status = models.CharField(
        _("status"), max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED
    )
    cancel_requested = models.BooleanField(_("cancel requested"), default=False)
    config = models.JSONField(_("configuration"))
    model_name = models.CharField(_("served model"), max_length=200, blank=True)
    prompts_exact = models.BooleanField(_("prompt lengths confirmed by the server"), default=False)
    progress = models.JSONField(_("progress"), default=dict, blank=True)
    results = models.JSONField(_("results"), default=dict, blank=True)
    records = models.JSONField(_("per-request timings"), default=list, blank=True)
    comparison = models.JSONField(_("plan comparison"), default=dict, blank=True)
    error = models.TextField(_("error"), blank=True)
    # When the running worker last reported progress: a run whose reports stop (its worker died
    # or was restarted) is ended as failed (services.runs_end_stale).
    heartbeat_at = models.DateTimeField(_("last progress report"), null=True, blank=True)
    # The configuration, status and results are audited; progress ticks and timings are not.
    history = HistoricalRecords(excluded_fields=["progress", "records", "heartbeat_at"])

    class Meta:
        ordering = ("-created_at", "-pk")
        verbose_name = _("benchmark run")
        verbose_name_plural = _("benchmark runs")
        constraints = [
            # One run per endpoint at a time: two would measure each other.
            models.UniqueConstraint(
                fields=["target"],
                condition=Q(status__in=["queued", "running"]),
                name="benchmarks_one_active_run_per_target",
            )
        ]

    def __str__(self) -> str:
        return f"{self.target_name} · {self.created_at:%Y-%m-%d %H:%M}"

    def get_absolute_url(self) -> str:
        return reverse("benchmarks:detail", args=[self.public_id])

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def levels(self) -> list[dict]:
        return list(self.results.get("levels", []))
