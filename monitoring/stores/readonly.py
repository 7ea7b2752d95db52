"""Series of read-only targets, computed by PromQL from what an existing Prometheus scrapes
(monitoring.series.readonly says which keys and how). Nothing is written: ServePlan polls
nothing for these targets."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

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
    promql,
    readonly,
)
from monitoring.stores.prometheus import PrometheusStore
from monitoring.stores.promql_range import Grid, Matrix, bucketed, read, result

# Rates and quantiles look back at least this many scrape intervals (two would do with no
# missed scrape; four keep a value through one).
RATE_WINDOW_INTERVALS = 4
# The label that tags each key's answer when all keys go in one query.
KEY_LABEL = "serveplan_key"


def _finite(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(t, v) for t, v in points if math.isfinite(v)]


class ReadOnlyReader:
    name = "read-only"

    def __init__(self, server: PrometheusStore) -> None:
        self.server = server

    def _expr(self, target: TargetRef, keys: Iterable[str], step_ms: int) -> str | None:
        """One query for every key: each key's expression, tagged with the key."""
        window = max(RATE_WINDOW_INTERVALS * target.interval_s * 1000, step_ms)
        matchers = promql.parse_selector(target.selector)
        parts = []
        for key in dict.fromkeys(keys):
            expr = readonly.expression(key, matchers, window)
            if expr is not None:
                tag = f"{promql.quote(KEY_LABEL)}, {promql.quote(key)}"
                parts.append(f'label_replace({expr}, {tag}, "", "")')
        return " or ".join(parts) or None

    def _by_key(self, rows: Matrix) -> dict[str, list[tuple[float, float]]]:
        return {m[KEY_LABEL]: _finite(points) for m, points in rows if m.get(KEY_LABEL)}

    def _series(
        self, target: TargetRef, keys: Iterable[str], grid: Grid
    ) -> dict[str, list[tuple[float, float]]]:
        expr = self._expr(target, keys, grid.step_ms)
        if expr is None:
            return {}
        return self._by_key(read(self.server.query_range, expr, grid))

    def write(self, batch: WriteBatch) -> None:
        raise ValueError(f"target {batch.target.name} is read-only: ServePlan writes nothing")

    def write_report(self) -> WriteReport:
        return WriteReport()

    def forget(self, target: TargetRef) -> ForgetReport:
        return ForgetReport(outcome=Forgotten.NOT_OURS, selector=target.selector)

    def range(
        self,
        targets: Sequence[TargetRef],
        series: Sequence[SeriesMatch],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        grid = Grid.buckets(start, end, max_points)
        keys = sorted({m.key for m in series if not m.labels})  # unlabelled series only
        found = []
        for target in targets:
            by_key = self._series(target, keys, grid)
            for key in keys:
                points = by_key.get(key)
                if points:
                    found.append(bucketed(target.id, key, (), points, grid, target.interval_s))
        return result(grid, found)

    def fleet_sum(
        self,
        targets: Sequence[TargetRef],
        keys: Sequence[str],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        grid = Grid.buckets(start, end, max_points)
        summed: dict[str, dict[float, float]] = {key: defaultdict(float) for key in keys}
        for target in targets:
            for key, points in self._series(target, keys, grid).items():
                for t, v in points:
                    summed[key][t] += v
        shortest = min((t.interval_s for t in targets), default=None)
        out = [bucketed(None, key, (), sorted(summed[key].items()), grid, shortest) for key in keys]
        return result(grid, out)

    def latest(self, target: TargetRef, keys: Iterable[str]) -> list[LatestValue]:
        """Each key's value now (Prometheus' own lookback: the last scrape within 5 minutes)."""
        return [LatestValue(key, (), value) for key, value in self.values(target, keys).items()]

    def values(
        self, target: TargetRef, keys: Iterable[str], at: datetime | None = None
    ) -> dict[str, float]:
        expr = self._expr(target, keys, 0)
        if expr is None:
            return {}
        by_key = self._by_key(self.server.query(expr, at or datetime.now(UTC)))
        return {key: points[-1][1] for key, points in by_key.items() if points}

    def window(
        self, target: TargetRef, keys: Iterable[str], start: datetime, end: datetime
    ) -> dict[str, Points]:
        """One point per scrape interval, on the same instants for every key (callers join
        series on their timestamps, as they do on the polls of a polled target)."""
        by_key = self._series(target, keys, Grid.every(start, end, target.interval_s * 1000))
        return {
            key: [(datetime.fromtimestamp(t, tz=UTC), v) for t, v in by_key.get(key, [])]
            for key in dict.fromkeys(keys)
        }

    def total(
        self, targets: Sequence[TargetRef], key: str, start: datetime, end: datetime
    ) -> float:
        return float(sum(v for t in targets for _, v in self.window(t, [key], start, end)[key]))
