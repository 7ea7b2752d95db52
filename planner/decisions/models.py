"""Decision records: a plan turned into a commitment with owners (DOMAIN.md §7, seed 001)."""

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from inventory.models import PoolKind
from planner.decisions.guidance import (
    EVIDENCE_SPECS,
    EvidenceKind,
    ResponsibilityKind,
    guidance_for,
)
from planner.engine.result import Backend
from planner.labels import BACKEND_TITLES
from planner.models import Route


class Status(models.TextChoices):
    PROPOSED = "proposed", _("Proposed")
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected")
    SUPERSEDED = "superseded", _("Superseded")


# The engine's backends, labelled once (planner.labels): the stored values cannot drift from it.
ExecutorBackend = models.TextChoices(
    "ExecutorBackend", [(b.name, (b.value, BACKEND_TITLES[b])) for b in Backend]
)


class EvidenceSource(models.TextChoices):
    TYPED = "typed", _("Typed in")
    MONITORING = "monitoring", _("Monitoring")


def format_number(number: int | None) -> str:
    """Return the ADR-style label of a record number, e.g. 'DR-0007'."""
    return f"DR-{number:04d}" if number else "DR-????"


class DecisionRecordQuerySet(models.QuerySet["DecisionRecord"]):
    def for_list(self) -> "DecisionRecordQuerySet":
        """Return the rows a list page or API list needs, without N+1 queries."""
        return self.select_related(
            "plan", "pool_plan", "created_by", "superseded_by"
        ).prefetch_related("authors", "responsibilities", "evidence_items", "supersedes")


class DecisionRecord(models.Model):
    """One deployment decision: context, the choice, five owned responsibilities and evidence."""

    number = models.PositiveIntegerField(_("number"), unique=True, editable=False)
    title = models.CharField(_("title"), max_length=200, help_text=_("State the decision."))
    status = models.CharField(
        _("status"), max_length=20, choices=Status.choices, default=Status.PROPOSED, db_index=True
    )
    plan = models.ForeignKey(
        "planner.Plan",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="decisions",
        verbose_name=_("plan"),
        help_text=_("The saved plan snapshot this decision came from, if any."),
    )
    pool_plan = models.ForeignKey(
        "planner.PoolPlan",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="decisions",
        verbose_name=_("pool plan"),
        help_text=_("The saved pool plan (several models) this decision came from, if any."),
    )
    pool_kind = models.CharField(
        _("pool kind"), max_length=20, choices=PoolKind.choices, default=PoolKind.DEDICATED
    )
    model_name = models.CharField(_("model"), max_length=200, blank=True, db_index=True)
    route = models.CharField(_("route"), max_length=10, choices=Route.choices, blank=True)
    executor_backend = models.CharField(
        _("executor backend"), max_length=10, choices=ExecutorBackend.choices, blank=True
    )
    layout = models.CharField(
        _("layout"), max_length=60, blank=True, help_text=_("For example TP4×PP2×1.")
    )
    context = models.TextField(_("context"), blank=True, help_text=_("Markdown."))
    decision_text = models.TextField(
        _("decision"), blank=True, help_text=_("What is decided, in Markdown.")
    )
    alternatives = models.TextField(
        _("alternatives considered"), blank=True, help_text=_("Markdown.")
    )
    consequences = models.TextField(_("consequences"), blank=True, help_text=_("Markdown."))
    verifiable_sentence = models.TextField(
        _("verifiable sentence"),
        blank=True,
        help_text=_(
            "One sentence that can be checked, e.g. “Keep mp, because the platform already "
            "reserves both nodes, starts them and rebuilds failed instances.”"
        ),
    )
    authors = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="decision_records",
        verbose_name=_("authors"),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("created by"),
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(_("updated"), default=timezone.now)
    decided_at = models.DateTimeField(_("decided"), null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("decided by"),
    )
    accepted_with_open_evidence = models.BooleanField(
        _("accepted with open evidence"),
        default=False,
        help_text=_("Accepted although some evidence was missing or failing; stays visible."),
    )
    superseded_by = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="supersedes",
        verbose_name=_("superseded by"),
    )
    # Optimistic concurrency: every write increments it; a form or API call that read an
    # older version is refused instead of silently overwriting someone else's edit.
    version = models.PositiveIntegerField(_("version"), default=1, editable=False)

    objects = DecisionRecordQuerySet.as_manager()
    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        verbose_name = _("decision record")
        verbose_name_plural = _("decision records")
        ordering = ["-number"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(status="superseded", superseded_by__isnull=False)
                    | (~models.Q(status="superseded") & models.Q(superseded_by__isnull=True))
                ),
                name="decisions_superseded_has_successor",
            ),
            models.CheckConstraint(
                condition=~models.Q(superseded_by=models.F("pk")),
                name="decisions_not_superseded_by_itself",
            ),
            models.CheckConstraint(  # one source: a single-model plan or a pool plan
                condition=models.Q(plan__isnull=True) | models.Q(pool_plan__isnull=True),
                name="decisions_one_plan_source",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.label}: {self.title}"

    def get_absolute_url(self) -> str:
        return reverse("decisions:detail", kwargs={"number": self.number})

    @property
    def label(self) -> str:
        return format_number(self.number)

    @property
    def is_read_only(self) -> bool:
        return self.status == Status.SUPERSEDED

    def ordered_responsibilities(self) -> list["Responsibility"]:
        """Return the five rows in template order (uses a prefetch when there is one)."""
        order = {k: i for i, k in enumerate(ResponsibilityKind.values)}
        return sorted(self.responsibilities.all(), key=lambda r: order.get(r.kind, 99))

    def owner_names(self) -> list[str]:
        """Return the distinct owners of the ownership table, in row order."""
        seen: dict[str, None] = {}
        for row in self.ordered_responsibilities():
            if row.owner.strip():
                seen.setdefault(row.owner.strip(), None)
        return list(seen)

    def ordered_evidence(self) -> list["EvidenceItem"]:
        """Return the evidence items in template order (uses a prefetch when there is one).

        Optional evidence (GPU utilisation) appears once it has a threshold or a measurement.
        """
        order = {k: i for i, k in enumerate(EvidenceKind.values)}
        items = [
            e
            for e in self.evidence_items.all()
            if EVIDENCE_SPECS[e.kind].required
            or e.threshold is not None
            or e.measured_value is not None
        ]
        return sorted(items, key=lambda e: order.get(e.kind, 99))


class Responsibility(models.Model):
    """One row of the ownership table: who owns a responsibility and how they do it."""

    decision = models.ForeignKey(
        DecisionRecord,
        on_delete=models.CASCADE,
        related_name="responsibilities",
        verbose_name=_("decision record"),
    )
    kind = models.CharField(_("responsibility"), max_length=20, choices=ResponsibilityKind.choices)
    owner = models.CharField(
        _("owner"),
        max_length=200,
        blank=True,
        help_text=_("A user, a team or a named system such as “Slurm” or “Ray placement group”."),
    )
    mechanism = models.TextField(_("mechanism"), blank=True, help_text=_("How they do it."))

    history = HistoricalRecords()

    class Meta:
        verbose_name = _("responsibility")
        verbose_name_plural = _("responsibilities")
        constraints = [
            models.UniqueConstraint(
                fields=["decision", "kind"], name="decisions_one_row_per_responsibility"
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.owner}"

    @property
    def guidance(self) -> str:
        return str(guidance_for(self.kind, self.decision.pool_kind))

    @property
    def is_complete(self) -> bool:
        return bool(self.owner.strip() and self.mechanism.strip())


class EvidenceItem(models.Model):
    """One measurement that proves (or fails to prove) the choice, against a team threshold."""

    decision = models.ForeignKey(
        DecisionRecord,
        on_delete=models.CASCADE,
        related_name="evidence_items",
        verbose_name=_("decision record"),
    )
    kind = models.CharField(_("evidence"), max_length=30, choices=EvidenceKind.choices)
    threshold = models.FloatField(_("threshold"), null=True, blank=True)
    measured_value = models.FloatField(_("measured value"), null=True, blank=True)
    unit = models.CharField(_("unit"), max_length=10)
    # Not named "source": the audit log annotates its union rows with that name.
    value_source = models.CharField(
        _("source"), max_length=20, choices=EvidenceSource.choices, blank=True
    )
    window_start = models.DateTimeField(_("window start"), null=True, blank=True)
    window_end = models.DateTimeField(_("window end"), null=True, blank=True)
    note = models.TextField(
        _("note"), blank=True, help_text=_("Where the value comes from, or what happened.")
    )
    measured_at = models.DateTimeField(_("measured"), null=True, blank=True)
    measured_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("measured by"),
    )

    history = HistoricalRecords()

    class Meta:
        verbose_name = _("evidence item")
        verbose_name_plural = _("evidence items")
        constraints = [
            models.UniqueConstraint(
                fields=["decision", "kind"], name="decisions_one_item_per_kind"
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(window_start__isnull=True)
                    | models.Q(window_end__isnull=True)
                    | models.Q(window_end__gte=models.F("window_start"))
                ),
                name="decisions_evidence_window_ordered",
            ),
        ]

    def __str__(self) -> str:
        return str(self.get_kind_display())

    @property
    def lower_is_better(self) -> bool:
        spec = EVIDENCE_SPECS.get(self.kind)
        return spec.lower_is_better if spec else True

    @property
    def comparison(self) -> str:
        return "≤" if self.lower_is_better else "≥"

    @property
    def threshold_text(self) -> str:
        """Return e.g. '≤ 800 ms', or '' without a threshold."""
        if self.threshold is None:
            return ""
        return f"{self.comparison} {self.threshold:g} {self.unit}"

    @property
    def measured_text(self) -> str:
        """Return e.g. '310 ms', or '' before a measurement."""
        return "" if self.measured_value is None else f"{self.measured_value:g} {self.unit}"

    @property
    def passed(self) -> bool | None:
        """Return True/False against the threshold, or None while either number is missing."""
        if self.threshold is None or self.measured_value is None:
            return None
        if self.lower_is_better:
            return self.measured_value <= self.threshold
        return self.measured_value >= self.threshold


class RevisionAction(models.TextChoices):
    CREATED = "created", _("Created")
    EDITED = "edited", _("Edited")
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected")
    SUPERSEDED = "superseded", _("Superseded")
    SUPERSEDES = "supersedes", _("Supersedes an earlier record")
    EVIDENCE = "evidence", _("Evidence measured")


class RevisionIsPermanent(Exception):
    """Raised when code tries to change or delete a revision."""


class DecisionRevision(models.Model):
    """A full snapshot of a record after one write; revisions are never changed or deleted."""

    decision = models.ForeignKey(
        DecisionRecord,
        on_delete=models.PROTECT,
        related_name="revisions",
        verbose_name=_("decision record"),
    )
    number = models.PositiveIntegerField(_("revision"))
    created_at = models.DateTimeField(_("when"), default=timezone.now)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("who"),
    )
    # Who, when no user acted (e.g. "monitoring"); kept as text so it survives.
    author_label = models.CharField(_("who"), max_length=150)
    action = models.CharField(_("action"), max_length=20, choices=RevisionAction.choices)
    changed_fields = models.JSONField(_("what changed"), default=list)
    snapshot = models.JSONField(_("snapshot"))

    class Meta:
        verbose_name = _("revision")
        verbose_name_plural = _("revisions")
        ordering = ["decision", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["decision", "number"], name="decisions_revision_number_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.decision_id} r{self.number}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise RevisionIsPermanent(_("A revision cannot be changed."))
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise RevisionIsPermanent(_("A revision cannot be deleted."))
