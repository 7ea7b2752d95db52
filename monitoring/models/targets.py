"""Monitoring: targets and their poll state, stored samples and rollups, alert rules and events."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from core.secrets import EncryptedTextField
from monitoring import pacing

MIN_POLL_INTERVAL_S = 5
# A target's own sample_limit may not exceed this (0, "no limit", is never allowed per target).
MAX_SAMPLE_LIMIT = 1_000_000
MAX_POLL_INTERVAL_S = 3600
DEFAULT_POLL_INTERVAL_S = 15


class TargetKind(models.TextChoices):
    VLLM = "vllm", _("vLLM server")
    RAY = "ray", _("Ray cluster")
    GPU = "gpu", _("GPU exporter (one machine)")


class PlanScope(models.TextChoices):
    REPLICA = "replica", _("one replica of the plan")
    PLAN = "plan", _("the whole plan (a Route B instance or a Route C pool)")


class PollStatus(models.TextChoices):
    NEVER = "never", _("never polled")
    OK = "ok", _("up")
    ERROR = "error", _("down")


# What polls record about a target, never what a user edits: read-only in the API and the admin.
TARGET_POLL_STATE_FIELDS = (
    "last_poll_at",
    "last_success_at",
    "last_status",
    "last_error",
    "last_error_kind",
    "last_error_at",
    "last_duration_ms",
    "consecutive_failures",
    "discovered_exporters",
)
# Not in the target's history: the secret, and what every poll or schedule changes.
TARGET_UNAUDITED_FIELDS = [
    "token",
    *TARGET_POLL_STATE_FIELDS,
    "missed_polls",
    "last_slot",
    "next_poll_at",
    "rescheduled_at",
    "info",
    "latest",
    "updated_at",
]


class Target(models.Model):
    """What workers poll: a vLLM server (its base URL), a Ray cluster (its dashboard URL) or one
    machine's GPU exporter (dcgm-exporter or nvidia_gpu_exporter, its base URL)."""

    name = models.CharField(_("name"), max_length=100, unique=True)
    kind = models.CharField(_("kind"), max_length=8, choices=TargetKind.choices)
    base_url = models.URLField(
        _("base URL"),
        max_length=500,
        help_text=_(
            "vLLM: the OpenAI-compatible server, e.g. http://10.0.0.5:8000. "
            "Ray: the dashboard, e.g. http://10.0.0.9:8265. "
            "GPU: the machine's dcgm-exporter (http://10.0.0.5:9400) or nvidia_gpu_exporter "
            "(http://10.0.0.5:9835)."
        ),
        blank=True,
    )
    # Read-only mode: the series of a server an existing Prometheus scrapes. ServePlan polls
    # nothing for such a target; it reads Prometheus (monitoring.series.readonly.reader).
    selector = models.CharField(
        _("Prometheus selector"),
        max_length=500,
        blank=True,
        default="",
        help_text=_(
            "Instead of a URL: the job and instance labels under which your Prometheus already "
            'scrapes this server, e.g. {job="vllm",instance="10.0.0.5:8000"} (a Ray cluster: '
            'its node exporters, e.g. {job="ray"}). ServePlan then polls nothing and reads its '
            "series from Prometheus (MONITORING_PROMETHEUS_URL)."
        ),
    )
    machines = models.ManyToManyField(
        "inventory.Machine",
        verbose_name=_("machines"),
        blank=True,
        related_name="monitoring_targets",
        help_text=_(
            "The inventory machines this server or cluster runs on. A GPU exporter is linked "
            "to its machine here, or else by the host name it reports."
        ),
    )
    plan = models.ForeignKey(
        "planner.Plan",
        verbose_name=_("plan"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="monitoring_targets",
        help_text=_("The saved plan this server implements: shown as plan vs reality."),
    )
    plan_scope = models.CharField(
        _("what the target serves of the plan"),
        max_length=8,
        choices=PlanScope.choices,
        default=PlanScope.REPLICA,
        help_text=_(
            "One replica: compared with one replica's predictions; the plan view sums every "
            "replica linked. The whole plan: one endpoint for all of it."
        ),
    )
    decision = models.ForeignKey(
        "decisions.DecisionRecord",
        verbose_name=_("decision"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="monitoring_targets",
        help_text=_("The decision record whose evidence this target's metrics can fill."),
    )
    poll_interval_s = models.PositiveIntegerField(
        _("poll interval (s)"),
        default=DEFAULT_POLL_INTERVAL_S,
        validators=[
            MinValueValidator(MIN_POLL_INTERVAL_S),
            MaxValueValidator(MAX_POLL_INTERVAL_S),
        ],
    )
    enabled = models.BooleanField(_("enabled"), default=True)
    sample_limit = models.PositiveIntegerField(
        _("sample limit"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SAMPLE_LIMIT)],
        help_text=_(
            "Most samples one poll may read, as Prometheus' sample_limit (a page over it is"
            " refused). Empty: the server-wide default."
        ),
    )
    # Encrypted at rest (core.secrets, FIELD_ENCRYPTION_KEYS); never shown again, never logged.
    # Querysets that list targets defer it: only a poll needs the plaintext.
    token = EncryptedTextField(_("bearer token"), blank=True, editable=False)

    last_poll_at = models.DateTimeField(_("last poll"), null=True, blank=True, editable=False)
    last_success_at = models.DateTimeField(
        _("last successful poll"), null=True, blank=True, editable=False
    )
    last_status = models.CharField(
        _("last status"),
        max_length=8,
        choices=PollStatus.choices,
        default=PollStatus.NEVER,
        editable=False,
    )
    last_error = models.TextField(_("last error"), blank=True, editable=False)
    last_error_kind = models.CharField(
        _("last error kind"), max_length=32, blank=True, editable=False
    )
    last_error_at = models.DateTimeField(_("last error at"), null=True, blank=True, editable=False)
    last_duration_ms = models.FloatField(
        _("last poll duration (ms)"), null=True, blank=True, editable=False
    )
    consecutive_failures = models.PositiveIntegerField(
        _("consecutive failed polls"), default=0, editable=False
    )
    # Polls that were due and never ran (expired in the queue, starved, no worker): see
    # monitoring.pacing. Counted when the next poll finishes.
    missed_polls = models.PositiveIntegerField(_("missed polls"), default=0, editable=False)
    # The scheduler's slot (unix seconds) of the last poll stored: a redelivered poll is skipped.
    last_slot = models.BigIntegerField(null=True, blank=True, editable=False)
    next_poll_at = models.DateTimeField(null=True, blank=True, editable=False, db_index=True)
    # When a user last restarted its schedule (interval changed, re-enabled): the wait for the
    # first slot of the new schedule, or the time it was disabled, is no missed poll.
    rescheduled_at = models.DateTimeField(null=True, blank=True, editable=False)
    discovered_exporters = models.JSONField(
        _("discovered Ray exporters"), default=list, blank=True, editable=False
    )
    # Server facts of the last successful poll (vLLM cache config, Ray nodes, placement groups).
    info = models.JSONField(default=dict, blank=True, editable=False)
    # The headline values of the last successful poll, for the fleet overview (one query).
    latest = models.JSONField(default=dict, blank=True, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    # Who changed what (audit log). The poller writes its state with queryset updates, which
    # make no history rows; that state and the token stay out of the history table.
    history = HistoricalRecords(excluded_fields=TARGET_UNAUDITED_FIELDS)

    class Meta:
        ordering = ["name"]
        verbose_name = _("target")
        verbose_name_plural = _("targets")
        constraints = [
            models.CheckConstraint(
                condition=Q(poll_interval_s__gte=MIN_POLL_INTERVAL_S)
                & Q(poll_interval_s__lte=MAX_POLL_INTERVAL_S),
                name="monitoring_target_poll_interval_range",
            ),
        ]
        indexes = [models.Index(fields=["enabled", "next_poll_at"], name="monitoring_target_due")]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"

    def get_absolute_url(self) -> str:
        return reverse("monitoring:target-detail", kwargs={"pk": self.pk})

    def clean(self) -> None:
        """A target has a URL to poll or a Prometheus selector to read, never both or none."""
        from monitoring.series.promql import SelectorError, canonical_selector

        if self.selector:
            if self.base_url:
                raise ValidationError(
                    {"selector": _("Give a base URL or a Prometheus selector, not both.")}
                )
            try:
                self.selector = canonical_selector(self.selector)
            except SelectorError as exc:
                raise ValidationError({"selector": str(exc)}) from None
        elif not self.base_url:
            raise ValidationError({"base_url": _("Give a base URL or a Prometheus selector.")})

    @property
    def read_only(self) -> bool:
        return bool(self.selector)

    @property
    def spacing_factor(self) -> int:
        """Intervals between the last poll and the next: 2 or 4 after costly failures, else 1."""
        return pacing.current_factor(
            self.last_status, self.last_error_kind, self.consecutive_failures
        )


class TargetSnapshot(models.Model):
    """The previous raw snapshot of a target (cumulative counters), for rates at the next poll."""

    target = models.OneToOneField(
        Target, on_delete=models.CASCADE, primary_key=True, related_name="snapshot"
    )
    taken_at = models.DateTimeField()
    data = models.JSONField(default=dict)

    class Meta:
        verbose_name = _("raw snapshot")
        verbose_name_plural = _("raw snapshots")

    def __str__(self) -> str:
        return f"{self.target_id} @ {self.taken_at.isoformat()}"


class Sample(models.Model):
    """One stored value: a series key, its canonical labels and a timestamp."""

    # No index of its own: the sample key starts with the target and serves every read by target
    # (a target's deletion included).
    target = models.ForeignKey(
        Target, on_delete=models.CASCADE, related_name="samples", db_index=False
    )
    series = models.CharField(max_length=100)
    # Canonical `{a="1",b="x"}` (labels sorted) or empty.
    labels = models.CharField(max_length=400, blank=True, default="")
    ts = models.DateTimeField()
    value = models.FloatField()

    class Meta:
        verbose_name = _("sample")
        verbose_name_plural = _("samples")
        constraints = [
            # A redelivered poll writes nothing twice (bulk_create ignore_conflicts).
            # Column order: the index also serves (target, series, ts range) reads of every label
            # set; `labels` last only completes the identity.
            models.UniqueConstraint(
                fields=["target", "series", "ts", "labels"], name="monitoring_sample_key"
            ),
        ]
        # `ts` alone serves the rollups (a minute across targets) and, on SQLite, retention.
        # On PostgreSQL the table is partitioned by the hour on `ts` (migration 0016): the primary
        # key there is (id, ts), as a partitioned table's unique keys must hold the partition
        # column, and retention drops whole partitions (monitoring/partitioning.py).
        indexes = [models.Index(fields=["ts"], name="monitoring_sample_ts")]

    def __str__(self) -> str:
        return f"{self.series}{self.labels} @ {self.ts.isoformat()} = {self.value}"


class Rollup(models.Model):
    """One-minute aggregate of a series: min, average, max and last value."""

    # No index of its own: the key's first column serves every read by target, and one on the
    # target alone made the planner read all of a target's minutes to filter them (migration 0020).
    target = models.ForeignKey(
        Target, on_delete=models.CASCADE, related_name="rollups", db_index=False
    )
    series = models.CharField(max_length=100)
    labels = models.CharField(max_length=400, blank=True, default="")
    minute = models.DateTimeField()
    count = models.PositiveIntegerField()
    min = models.FloatField()
    avg = models.FloatField()
    max = models.FloatField()
    last = models.FloatField()

    class Meta:
        verbose_name = _("rollup")
        verbose_name_plural = _("rollups")
        constraints = [
            models.UniqueConstraint(
                fields=["target", "series", "minute", "labels"], name="monitoring_rollup_key"
            ),
        ]
        indexes = [models.Index(fields=["minute"], name="monitoring_rollup_minute")]

    def __str__(self) -> str:
        return f"{self.series}{self.labels} @ {self.minute.isoformat()}"


class FleetSum(models.Model):
    """The fleet's sums at one time: each unlabelled latest value added over the targets up.

    Written once per scheduler tick (`step_s` 5) and averaged per minute by the rollup job
    (`step_s` 60), so that the fleet charts read one row per point instead of aggregating every
    target's samples at every request.
    """

    ts = models.DateTimeField()
    step_s = models.PositiveIntegerField()
    values = models.JSONField(default=dict)

    class Meta:
        verbose_name = _("fleet sum")
        verbose_name_plural = _("fleet sums")
        constraints = [
            models.UniqueConstraint(fields=["step_s", "ts"], name="monitoring_fleetsum_key"),
        ]

    def __str__(self) -> str:
        return f"fleet @ {self.ts.isoformat()} ({self.step_s} s)"


class SpooledWrite(models.Model):
    """One poll's samples that the remote-write server has not taken yet (monitoring.stores.spool).

    Kept in the database rather than a worker's memory, so that a worker stopped or killed while
    the server is down loses nothing: any worker sends them, oldest first, once it answers again.
    Deleting the target deletes them, so a deleted target's samples never reach the server.
    """

    # None: the fleet's sums of a scheduler tick (monitoring.series.remote_write.FLEET).
    target = models.ForeignKey(Target, on_delete=models.CASCADE, related_name="+", null=True)
    polled_at = models.DateTimeField()
    sample_count = models.PositiveIntegerField()
    samples = models.TextField()  # JSON [[key, [[label, value], ...], value], ...], NaN allowed

    class Meta:
        verbose_name = _("spooled remote write")
        verbose_name_plural = _("spooled remote writes")
        indexes = [models.Index(fields=["polled_at", "id"], name="monitoring_spool_order")]

    def __str__(self) -> str:
        return f"{self.sample_count} samples of target {self.target_id} @ {self.polled_at}"


class RollupCursor(models.Model):
    """How far raw samples have been rolled up (one row; minutes before `rolled_up_to` are done)."""

    name = models.CharField(max_length=32, unique=True)
    rolled_up_to = models.DateTimeField()

    class Meta:
        verbose_name = _("rollup cursor")
        verbose_name_plural = _("rollup cursors")

    def __str__(self) -> str:
        return f"{self.name}: {self.rolled_up_to.isoformat()}"


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


class AllowlistEntry(models.Model):
    """An address, a network or a host name that pollers and webhooks may reach besides the
    inventory's machines (which are always allowed). Only admins edit it; every change is in
    the audit log."""

    name = models.CharField(
        _("address, network or host name"),
        max_length=253,
        unique=True,
        help_text=_(
            "An address (10.0.0.5), a network (10.0.0.0/24), a host name (gpu1.lab) or a domain"
            " suffix starting with a dot (.gpu.internal)."
        ),
    )
    note = models.CharField(_("note"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        verbose_name = _("allowlist entry")
        verbose_name_plural = _("allowlist entries")

    def __str__(self) -> str:
        return self.name
