"""Targets, their poll state and last snapshot, and the allowlist pollers may reach."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from core.secrets import EncryptedTextField
from monitoring import pacing
from monitoring.series.promql import SelectorError, canonical_selector, parse_selector
from planner.selectors.pool_models import placed_model_names

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
            "series from Prometheus (MONITORING_PROMETHEUS_URL). The job must be one an admin "
            "allowed (Monitoring, Allowlist)."
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
    pool_plan = models.ForeignKey(
        "planner.PoolPlan",
        verbose_name=_("pool plan"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="monitoring_targets",
        help_text=_(
            "A saved pool plan (several models) one of whose models this server serves: name "
            "the model below. A target links a plan or a pool plan, not both."
        ),
    )
    pool_model = models.CharField(
        _("model of the pool plan"),
        max_length=40,
        blank=True,
        help_text=_("The model's name in the pool plan (as its page shows it)."),
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
        """A target has a URL to poll or a Prometheus selector to read, never both or none; a
        selector is one Prometheus parses, of a job an admin allowed, and a Prometheus to read
        it from is configured (the API, the pages and the admin all clean here)."""
        if self.selector:
            if self.base_url:
                raise ValidationError(
                    {"selector": _("Give a base URL or a Prometheus selector, not both.")}
                )
            try:
                self.selector = canonical_selector(self.selector)
            except SelectorError as exc:
                raise ValidationError({"selector": str(exc)}) from None
            refusal = selector_refusal(self.selector)
            if refusal:
                raise ValidationError({"selector": refusal})
        elif not self.base_url:
            raise ValidationError({"base_url": _("Give a base URL or a Prometheus selector.")})
        self._clean_pool_link()

    def _clean_pool_link(self) -> None:
        """A pool plan link names one of the models the pool plan placed."""
        if self.pool_plan_id is None:
            if self.pool_model:
                raise ValidationError({"pool_plan": _("Choose the pool plan of this model.")})
            return
        if self.plan_id is not None:
            raise ValidationError({"pool_plan": _("Link a plan or a pool plan, not both.")})
        placed = placed_model_names(self.pool_plan)
        if self.pool_model not in placed:
            raise ValidationError(
                {
                    "pool_model": _("Name one of the models the pool plan placed: %(names)s.")
                    % {"names": ", ".join(placed) or "—"}
                }
            )

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


class AllowedJob(models.Model):
    """A Prometheus job whose series read-only targets may read (the selector policy).

    A selector must match one of these jobs exactly (`job="vllm"`): the Prometheus that
    ServePlan reads may scrape much else, which planners have no business reading. No entry:
    no read-only target. Only admins edit it; every change is in the audit log."""

    name = models.CharField(
        _("Prometheus job"),
        max_length=200,
        unique=True,
        help_text=_(
            "The job label of a scrape job whose series read-only targets may read, e.g. vllm."
        ),
    )
    note = models.CharField(_("note"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        verbose_name = _("allowed Prometheus job")
        verbose_name_plural = _("allowed Prometheus jobs")

    def __str__(self) -> str:
        return self.name


def selector_refusal(selector: str) -> str | None:
    """Return why a read-only target may not read `selector` (canonical) now, or None.

    Refused when no Prometheus is configured to read it from (it would fail every read), and
    when it does not match exactly a job an admin allowed (AllowedJob)."""
    # As monitoring.stores builds its reader of read-only targets (models are below the stores).
    if not settings.MONITORING_PROMETHEUS_URL.strip():
        return str(
            _(
                "Read-only targets are read from Prometheus, and none is configured: an admin "
                "sets MONITORING_PROMETHEUS_URL first."
            )
        )
    return job_refusal(selector)


def job_refusal(selector: str) -> str | None:
    """Return why the selector policy refuses `selector` (canonical), or None: it must match
    exactly jobs an admin allowed (AllowedJob)."""
    jobs = {m.value for m in parse_selector(selector) if m.name == "job" and m.op == "="}
    if not jobs:
        return str(
            _(
                'Name the Prometheus job exactly, e.g. {job="vllm",instance="10.0.0.5:8000"}: '
                "read-only targets read only the jobs an admin allowed (Monitoring, Allowlist)."
            )
        )
    allowed = set(AllowedJob.objects.filter(name__in=jobs).values_list("name", flat=True))
    if jobs <= allowed:
        return None
    return str(
        _(
            'The Prometheus job "%(job)s" is not allowed for read-only targets: an admin can '
            "allow it in the monitoring allowlist."
        )
        % {"job": min(jobs - allowed)[:100]}
    )
