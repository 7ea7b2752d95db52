"""Series of read-only targets, computed by PromQL from what an existing Prometheus scrapes
(the tables beside this module say which keys and how, per kind). Nothing is written: ServePlan
polls nothing for these targets. Labelled series come back with the labels the poller stores."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from monitoring.scrape.series import Labels, freeze_labels, parse_series_id
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
)
from monitoring.series.promql_range import Grid, Matrix, PromqlServer, bucketed, read, result
from monitoring.series.readonly import kinds as readonly_kinds

# Rates and quantiles look back at least this many scrape intervals (two would do with no
# missed scrape; four keep a value through one).
RATE_WINDOW_INTERVALS = 4
# The longest look-back of a rate beyond those intervals (MONITORING_READONLY_RATE_WINDOW_MAX_S).
DEFAULT_RATE_WINDOW_MAX_S = 300
# The label that tags each key's answer when all keys go in one query.
KEY_LABEL = "serveplan_key"

SeriesKey = tuple[str, Labels]  # (key, labels)
Found = dict[SeriesKey, list[tuple[float, float]]]


def _finite(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(t, v) for t, v in points if math.isfinite(v)]


def _wanted(match: SeriesMatch, labels: Labels) -> bool:
    if match.labels is None:
        return True
    if not match.labels:
        return not labels
    return labels == freeze_labels(parse_series_id(match.key + match.labels)[1])


class ReadOnlyReader:
    name = "read-only"

    def __init__(
        self, server: PromqlServer, *, rate_window_max_s: int = DEFAULT_RATE_WINDOW_MAX_S
    ) -> None:
        self.server = server
        self.rate_window_max_ms = rate_window_max_s * 1000

    def rate_window_ms(self, target: TargetRef, step_ms: int) -> int:
        """How far rates look back at each step: the step (a bucket's whole change), but at
        most `rate_window_max_s`, and never under four scrape intervals.

        Prometheus reads every sample of that window at each of the query's steps: the bound
        keeps a long chart's cost at steps x window, not steps x a whole bucket."""
        floor_ms = RATE_WINDOW_INTERVALS * target.interval_s * 1000
        return max(floor_ms, min(step_ms, self.rate_window_max_ms))

    def _expr(self, target: TargetRef, keys: Iterable[str], step_ms: int) -> str | None:
        """One query for every key: each key's expression, tagged with the key."""
        window = self.rate_window_ms(target, step_ms)
        matchers = promql.parse_selector(target.selector)
        parts = []
        for key in dict.fromkeys(keys):
            expr = readonly_kinds.expression(target.kind, key, matchers, window)
            if expr is not None:
                tag = f"{promql.quote(KEY_LABEL)}, {promql.quote(key)}"
                parts.append(f'label_replace({expr}, {tag}, "", "")')
        return " or ".join(parts) or None

    def _label_family(self, target: TargetRef, keys: Iterable[str]) -> str | None:
        """The selector of the info family whose labels give some of `keys`, if any."""
        source = readonly_kinds.of_kind(target.kind).from_labels
        if source is None or not set(keys) & set(source.keys):
            return None
        return promql.vector(source.family, promql.parse_selector(target.selector))

    def _from_labels(self, target: TargetRef, keys: Iterable[str], rows: Matrix) -> Found:
        """The keys an info family's label sets give, at each instant the family was seen."""
        source = readonly_kinds.of_kind(target.kind).from_labels
        wanted = set(keys)
        by_time: dict[float, list[dict[str, str]]] = defaultdict(list)
        for metric, points in rows:
            for t, _ in points:
                by_time[t].append(metric)
        found: Found = defaultdict(list)
        for t in sorted(by_time):
            for sample in source.derive(by_time[t]) if source else ():
                if sample.key in wanted:
                    found[(sample.key, sample.labels)].append((t, sample.value))
        return found

    def _by_key(self, rows: Matrix) -> Found:
        found: Found = {}
        for metric, points in rows:
            key = metric.get(KEY_LABEL)
            if key:
                labels = freeze_labels(
                    {k: v for k, v in metric.items() if k not in (KEY_LABEL, "__name__")}
                )
                found[(key, labels)] = _finite(points)
        return found

    def _series(self, target: TargetRef, keys: Iterable[str], grid: Grid) -> Found:
        keys = list(keys)
        found: Found = {}
        expr = self._expr(target, keys, grid.step_ms)
        if expr is not None:
            found.update(self._by_key(read(self.server.query_range, expr, grid)))
        family = self._label_family(target, keys)
        if family is not None:
            rows = read(self.server.query_range, family, grid)
            found.update(self._from_labels(target, keys, rows))
        return found

    def _now(self, target: TargetRef, keys: Iterable[str], at: datetime) -> Found:
        keys = list(keys)
        found: Found = {}
        expr = self._expr(target, keys, 0)
        if expr is not None:
            found.update(self._by_key(self.server.query(expr, at)))
        family = self._label_family(target, keys)
        if family is not None:
            found.update(self._from_labels(target, keys, self.server.query(family, at)))
        return found

    def facts(self, target: TargetRef, at: datetime | None = None) -> dict[str, Any]:
        """What the kind keeps in `info` from the exporter's labels now ({} if nothing)."""
        source = readonly_kinds.of_kind(target.kind).facts
        if source is None:
            return {}
        names = promql.Matcher("__name__", "=~", "|".join(source.families))
        selector = promql.vector("", [names, *promql.parse_selector(target.selector)])
        rows = self.server.query(selector, at or datetime.now(UTC))
        return source.read([metric for metric, _ in rows])

    def write(self, batch: WriteBatch) -> None:
        raise ValueError(f"target {batch.target.name} is read-only: ServePlan writes nothing")

    def write_report(self) -> WriteReport:
        return WriteReport()

    def write_fleet_sums(self, ts: datetime, sums: Mapping[str, float]) -> None:
        raise ValueError("read-only targets are summed by the Prometheus that scrapes them")

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
        matches = list(dict.fromkeys(series))
        found = []
        for target in targets:
            by_key = self._series(target, sorted({m.key for m in matches}), grid)
            for (key, labels), points in sorted(by_key.items()):
                if points and any(m.key == key and _wanted(m, labels) for m in matches):
                    found.append(bucketed(target.id, key, labels, points, grid, target.interval_s))
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
            for (key, labels), points in self._series(target, keys, grid).items():
                for t, v in points if not labels else ():
                    summed[key][t] += v
        shortest = min((t.interval_s for t in targets), default=None)
        out = [bucketed(None, key, (), sorted(summed[key].items()), grid, shortest) for key in keys]
        return result(grid, out)

    def latest(self, target: TargetRef, keys: Iterable[str]) -> list[LatestValue]:
        """Every label set of each key now (Prometheus' own lookback: the last scrape within
        5 minutes)."""
        return self.values(target, keys)

    def values(
        self, target: TargetRef, keys: Iterable[str], at: datetime | None = None
    ) -> list[LatestValue]:
        found = self._now(target, keys, at or datetime.now(UTC))
        return [
            LatestValue(key, labels, points[-1][1])
            for (key, labels), points in sorted(found.items())
            if points
        ]

    def window(
        self, target: TargetRef, keys: Iterable[str], start: datetime, end: datetime
    ) -> dict[str, Points]:
        """One point per scrape interval, on the same instants for every key (callers join
        series on their timestamps, as they do on the polls of a polled target)."""
        by_key = self._series(target, keys, Grid.every(start, end, target.interval_s * 1000))
        return {
            key: [(datetime.fromtimestamp(t, tz=UTC), v) for t, v in by_key.get((key, ()), [])]
            for key in dict.fromkeys(keys)
        }

    def total(
        self, targets: Sequence[TargetRef], key: str, start: datetime, end: datetime
    ) -> float:
        return float(sum(v for t in targets for _, v in self.window(t, [key], start, end)[key]))
