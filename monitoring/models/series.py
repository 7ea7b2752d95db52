"""The embedded series store's tables: samples, one-minute rollups, fleet sums, the spool of
remote writes, and the rollup cursor (read and written only by monitoring.stores)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from monitoring.models.targets import Target


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
