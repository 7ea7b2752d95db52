"""One store for every target: polled targets go to the configured backend, read-only targets
(a PromQL selector instead of a URL) to the Prometheus that scrapes them. Reads over both kinds
are merged, so callers never tell them apart."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from monitoring.series import (
    ForgetReport,
    Forgotten,
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

_T = TypeVar("_T")


def _split(targets: Sequence[TargetRef]) -> tuple[list[TargetRef], list[TargetRef]]:
    return [t for t in targets if not t.read_only], [t for t in targets if t.read_only]


def _merged(
    parts: list[RangeResult],
    combine: Callable[[list[SeriesPoints]], tuple],
    unavailable: Sequence[TargetRef] = (),
) -> RangeResult:
    first = parts[0]
    return RangeResult(
        start_ms=first.start_ms,
        end_ms=first.end_ms,
        bucket_s=first.bucket_s,
        source=first.source,
        series=combine([s for part in parts for s in part.series]),
        unavailable=tuple(sorted(t.id for t in unavailable)),
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

    def _read_only_part(self, read: Callable[[ReadOnlyReader], _T]) -> _T | None:
        """Read the read-only targets' part of a fleet read; None when their Prometheus does
        not answer (or none is set): the polled targets' part still answers."""
        try:
            return read(self.read_only())
        except StoreUnavailable:
            return None

    def write(self, batch: WriteBatch) -> None:
        self._for(batch.target).write(batch)

    def write_report(self) -> WriteReport:
        return self.polled.write_report()

    def write_fleet_sums(self, ts: datetime, sums: Mapping[str, float]) -> None:
        self.polled.write_fleet_sums(ts, sums)  # of polled targets: read-only ones sum above

    def forget(self, target: TargetRef) -> ForgetReport:
        """Delete what ServePlan wrote of a deleted target: its polls' series in the polled
        store, even when it is read-only now (it was polled before its URL became a selector).
        The series of a read-only target's server stay in the Prometheus scraping it."""
        report = self.polled.forget(target)
        if target.read_only and report.outcome is not Forgotten.KEPT:
            return replace(report, outcome=Forgotten.NOT_OURS, selector=target.selector)
        return report

    def range(
        self,
        targets: Sequence[TargetRef],
        series: Sequence[SeriesMatch],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        polled, watched = _split(targets)
        if watched and not polled:  # one read-only target's own series: unavailable says so
            return self.read_only().range(watched, series, start, end, max_points)
        parts = [self.polled.range(polled, series, start, end, max_points)]
        extra = (
            self._read_only_part(lambda r: r.range(watched, series, start, end, max_points))
            if watched
            else None
        )
        if extra is not None:
            parts.append(extra)
        return _merged(
            parts,
            lambda s: tuple(sorted(s, key=lambda p: (p.target_id, p.key, p.labels))),
            watched if extra is None else (),
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
        extra = self._read_only_part(lambda r: r.fleet_sum(watched, keys, start, end, max_points))
        if extra is None:
            return _merged([result], _sum_by_key, watched)
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
        """The sum over the targets whose store answers (a fleet figure such as missed polls
        must not fail because the read-only targets' Prometheus does not)."""
        polled, watched = _split(targets)
        value = self.polled.total(polled, key, start, end)
        if watched:
            value += self._read_only_part(lambda r: r.total(watched, key, start, end)) or 0.0
        return value
