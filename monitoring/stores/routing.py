"""One store for every target: polled targets go to the configured backend, read-only targets
(a PromQL selector instead of a URL) to the Prometheus that scrapes them. Reads over both kinds
are merged, so callers never tell them apart."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime

from monitoring.series import (
    ForgetReport,
    LatestValue,
    Points,
    RangeResult,
    SeriesMatch,
    SeriesPoints,
    SeriesStore,
    StoreUnavailable,
    TargetRef,
    WriteBatch,
    WriteReport,
)
from monitoring.series.readonly.reader import ReadOnlyReader


def _split(targets: Sequence[TargetRef]) -> tuple[list[TargetRef], list[TargetRef]]:
    return [t for t in targets if not t.read_only], [t for t in targets if t.read_only]


def _merged(
    parts: list[RangeResult], combine: Callable[[list[SeriesPoints]], tuple]
) -> RangeResult:
    first = parts[0]
    return RangeResult(
        start_ms=first.start_ms,
        end_ms=first.end_ms,
        bucket_s=first.bucket_s,
        source=first.source,
        series=combine([s for part in parts for s in part.series]),
    )


def _sum_by_key(series: list[SeriesPoints]) -> tuple[SeriesPoints, ...]:
    """Add fleet sums of the same key bucket by bucket (a gap counts as nothing)."""
    by_key: dict[str, dict[int, float]] = defaultdict(dict)
    for s in series:
        points = by_key[s.key]
        for t, v in zip(s.times_ms, s.values, strict=True):
            if v is not None:
                points[t] = round(points.get(t, 0.0) + v, 6)
    return tuple(
        SeriesPoints(
            target_id=None,
            key=key,
            labels=(),
            times_ms=tuple(sorted(points)),
            values=tuple(points[t] for t in sorted(points)),
        )
        for key, points in by_key.items()
    )


class RoutingStore:
    def __init__(self, polled: SeriesStore, read_only: ReadOnlyReader | None) -> None:
        self.polled = polled
        self._read_only = read_only
        self.name = polled.name

    def read_only(self) -> ReadOnlyReader:
        if self._read_only is None:
            raise StoreUnavailable(
                "read-only targets are read from Prometheus: set MONITORING_PROMETHEUS_URL"
            )
        return self._read_only

    def _for(self, target: TargetRef) -> SeriesStore:
        return self.read_only() if target.read_only else self.polled

    def write(self, batch: WriteBatch) -> None:
        self._for(batch.target).write(batch)

    def write_report(self) -> WriteReport:
        return self.polled.write_report()

    def write_fleet_sums(self, ts: datetime, sums: Mapping[str, float]) -> None:
        self.polled.write_fleet_sums(ts, sums)  # of polled targets: read-only ones sum above

    def forget(self, target: TargetRef) -> ForgetReport:
        return self._for(target).forget(target)

    def range(
        self,
        targets: Sequence[TargetRef],
        series: Sequence[SeriesMatch],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        polled, watched = _split(targets)
        parts = [self.polled.range(polled, series, start, end, max_points)]
        if watched:
            parts.append(self.read_only().range(watched, series, start, end, max_points))
        return _merged(
            parts, lambda s: tuple(sorted(s, key=lambda p: (p.target_id, p.key, p.labels)))
        )

    def fleet_sum(
        self,
        targets: Sequence[TargetRef],
        keys: Sequence[str],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        polled, watched = _split(targets)
        result = self.polled.fleet_sum(polled, keys, start, end, max_points)
        if not watched:
            return result
        extra = self.read_only().fleet_sum(watched, keys, start, end, max_points)
        return _merged([result, extra], _sum_by_key)

    def latest(self, target: TargetRef, keys: Iterable[str]) -> list[LatestValue]:
        return self._for(target).latest(target, keys)

    def window(
        self, target: TargetRef, keys: Iterable[str], start: datetime, end: datetime
    ) -> dict[str, Points]:
        return self._for(target).window(target, keys, start, end)

    def total(
        self, targets: Sequence[TargetRef], key: str, start: datetime, end: datetime
    ) -> float:
        polled, watched = _split(targets)
        value = self.polled.total(polled, key, start, end)
        if watched:
            value += self.read_only().total(watched, key, start, end)
        return value
