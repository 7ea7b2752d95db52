"""Saved plans: the spec a user entered and the engine's full result, frozen together."""

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from planner.engine.result import Route as EngineRoute
from planner.engine.result import layout_label
from planner.labels import ROUTE_TITLES

# The database's choices: the engine's routes, each with its one label (planner.labels).
Route = models.TextChoices("Route", [(r.name, (r.value, ROUTE_TITLES[r])) for r in EngineRoute])


class PlanQuerySet(models.QuerySet["Plan"]):
    def with_author(self) -> "PlanQuerySet":
        return self.select_related("author")

    def on_host(self, hostname: str) -> "PlanQuerySet":
        """Plans that use the machine `hostname` (any database: JSON list containment is not
        portable, so the list is searched as text; the quotes match a whole hostname)."""
        return self.filter(hostnames__icontains=f'"{hostname.strip().lower()}"')


class EngineRun(models.Model):
    """What every saved engine run keeps: the spec, the resolved engine input, the result and
    the engine's version (each subclass names its author relation)."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    title = models.CharField(_("title"), max_length=200)
    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    # What the user asked for (catalog slugs, inventory hostnames, wizard answers).
    spec = models.JSONField(_("spec"))
    # What the engine was given after the slugs and hostnames were resolved.
    engine_input = models.JSONField(_("engine input"))
    result = models.JSONField(_("engine result"))
    engine_version = models.CharField(_("engine version"), max_length=40)

    class Meta:
        abstract = True


class Plan(EngineRun):
    """An immutable snapshot: the spec, the resolved engine input and the engine's result.

    A decision recorded today must still show what was computed today after the engine
    improves, so a saved plan is never updated; "re-run with the current engine" creates a new
    plan pointing back at this one.
    """

    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="plans",
        verbose_name=_("author"),
    )
    # Denormalised from the result for filtering and listing without reading the JSON.
    model_slug = models.CharField(_("model slug"), max_length=100, blank=True, db_index=True)
    model_name = models.CharField(_("model"), max_length=200)
    route = models.CharField(_("route"), max_length=10, choices=Route.choices, db_index=True)
    tp = models.PositiveSmallIntegerField(_("tensor parallel size"))
    pp = models.PositiveSmallIntegerField(_("pipeline parallel size"))
    replicas = models.PositiveSmallIntegerField(_("replicas"))
    executor_backend = models.CharField(_("executor backend"), max_length=10)
    balancer = models.CharField(_("balancer"), max_length=20, blank=True)
    pool_kind = models.CharField(_("pool kind"), max_length=20)
    hostnames = models.JSONField(_("machines"), default=list, blank=True)
    calibration = models.ForeignKey(
        "planner.CalibrationProfile",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="plans",
        verbose_name=_("calibration profile"),
        help_text=_("The measured correction factors this plan was computed with, if any."),
    )
    rerun_of = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="reruns",
        verbose_name=_("re-run of"),
    )

    objects = PlanQuerySet.as_manager()

    class Meta:
        verbose_name = _("plan")
        verbose_name_plural = _("plans")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(tp__gte=1) & models.Q(pp__gte=1) & models.Q(replicas__gte=1),
                name="planner_plan_layout_positive",
            )
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise PlanIsImmutable(_("A saved plan is a snapshot and cannot be changed."))
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def get_absolute_url(self) -> str:
        return reverse("planner:plan-detail", kwargs={"public_id": self.public_id})

    @property
    def layout_label(self) -> str:
        return layout_label(self.tp, self.pp, self.replicas)


class PlanIsImmutable(Exception):
    """Raised when code tries to change a saved plan."""


class CalibrationProfile(models.Model):
    """Correction factors fitted from measured servers, for one GPU type × model family × dtype.

    Immutable like a plan: a refit is a new version of the same key, and a plan computed with a
    profile keeps pointing at the version it used.
    """

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    key = models.CharField(_("GPU type / model family / dtype"), max_length=200, db_index=True)
    gpu = models.CharField(_("GPU type"), max_length=100)
    model_family = models.CharField(_("model family"), max_length=60)
    weight_dtype = models.CharField(_("weight dtype"), max_length=10)
    version = models.PositiveIntegerField(_("version"))
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="calibration_profiles",
        verbose_name=_("created by"),
    )
    # The fitted factors: {name: {"value": v, "stderr": s or None, "unit": u}}.
    factors = models.JSONField(_("factors"))
    # Provenance: which targets over which window, and how well the fit explains them.
    window_start = models.DateTimeField(_("window start"))
    window_end = models.DateTimeField(_("window end"))
    sources = models.JSONField(_("targets"), default=list)
    residuals = models.JSONField(_("residuals"), default=list)
    observations = models.PositiveIntegerField(_("observations"))
    rms_error_before_pct = models.FloatField(_("RMS error before (%)"), null=True, blank=True)
    rms_error_after_pct = models.FloatField(_("RMS error after (%)"), null=True, blank=True)

    class Meta:
        verbose_name = _("calibration profile")
        verbose_name_plural = _("calibration profiles")
        ordering = ["key", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["key", "version"], name="planner_calibration_version"),
            models.CheckConstraint(
                condition=models.Q(window_end__gte=models.F("window_start")),
                name="planner_calibration_window_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} v{self.version}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise PlanIsImmutable(_("A calibration profile is a snapshot and cannot be changed."))
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def get_absolute_url(self) -> str:
        return reverse("monitoring:calibration-detail", kwargs={"public_id": self.public_id})


class PoolPlan(EngineRun):
    """An immutable snapshot of a pool plan: several models placed on one set of machines."""

    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="pool_plans",
        verbose_name=_("author"),
    )
    # Denormalised for listing: the route, the models and what they use.
    route = models.CharField(_("route"), max_length=10, choices=Route.choices, db_index=True)
    model_names = models.JSONField(_("models"), default=list)
    gpus_used = models.PositiveIntegerField(_("GPUs used"))
    unplaced = models.PositiveSmallIntegerField(_("models not placed"), default=0)
    hostnames = models.JSONField(_("machines"), default=list, blank=True)

    class Meta:
        verbose_name = _("pool plan")
        verbose_name_plural = _("pool plans")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise PlanIsImmutable(_("A saved plan is a snapshot and cannot be changed."))
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def get_absolute_url(self) -> str:
        return reverse("planner:pool-plan-detail", kwargs={"public_id": self.public_id})
