"""The embedded series store: the Sample and Rollup tables of ServePlan's own database.

It delegates to the queries that read those tables (queries, window, beside it): making them
fast is their business; this module only adapts them to the interface.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from django.db.models import Sum

from monitoring import fleet
from monitoring.models import FleetSum, Sample
from monitoring.scrape.series import freeze_labels, series_id
from monitoring.series import (
    ForgetReport,
    Forgotten,
    LatestValue,
    Points,
    RangeResult,
    SeriesMatch,
    TargetRef,
    WriteBatch,
    WriteReport,
)
from monitoring.stores.embedded import queries
from monitoring.stores.embedded.window import window_series
from monitoring.stores.live_ranges import cached_range


class EmbeddedStore:
    name = "embedded"

    def write(self, batch: WriteBatch) -> None:
        """Insert the batch's rows in the caller's transaction (a redelivered poll: no-op)."""
        rows = [
            Sample(
                target_id=batch.target.id,
                series=s.key,
                labels=series_id("", s.labels),
                ts=batch.ts,
                value=s.value,
            )
            for s in batch.samples
        ]
        Sample.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)

    def write_report(self) -> WriteReport:
        return WriteReport()  # written in the poll's own transaction: nothing is ever pending

    def write_fleet_sums(self, ts: datetime, sums: Mapping[str, float]) -> None:
        """One row per tick (a repeated tick stores nothing); the rollup job averages them."""
        row = FleetSum(ts=ts, step_s=fleet.TICK_STEP_S, values=dict(sums))
        FleetSum.objects.bulk_create([row], ignore_conflicts=True)

    def forget(self, target: TargetRef) -> ForgetReport:
        return ForgetReport(outcome=Forgotten.DELETED)  # the rows cascade with the target's

    def range(
        self,
        targets: Sequence[TargetRef],
        series: Sequence[SeriesMatch],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        def read() -> RangeResult:
            return RangeResult.from_json(
                queries.series_query(
                    target_ids=[t.id for t in targets],
                    requests=series,
                    start=start,
                    end=end,
                    max_points=max_points,
                )
            )

        return cached_range(targets, series, start, end, max_points, read)

    def fleet_sum(
        self,
        targets: Sequence[TargetRef],
        keys: Sequence[str],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        return RangeResult.from_json(
            queries.fleet_series(
                target_ids=[t.id for t in targets],
                keys=keys,
                start=start,
                end=end,
                max_points=max_points,
            )
        )

    def latest(self, target: TargetRef, keys: Iterable[str]) -> list[LatestValue]:
        if target.last_success_at is None:
            return []
        return [
            LatestValue(key, freeze_labels(labels), value)
            for key, labels, value in queries.latest_samples_at(
                target.id, target.last_success_at, keys
            )
        ]

    def window(
        self, target: TargetRef, keys: Iterable[str], start: datetime, end: datetime
    ) -> dict[str, Points]:
        return window_series(target.id, keys, start, end)

    def total(
        self, targets: Sequence[TargetRef], key: str, start: datetime, end: datetime
    ) -> float:
        value = Sample.objects.filter(
            target_id__in=[t.id for t in targets], series=key, ts__gte=start, ts__lte=end
        ).aggregate(n=Sum("value"))["n"]
        return float(value or 0.0)
