"""Range reads in PromQL, shared by the Prometheus store and the read-only reader: the instants
a read is evaluated at (bucket ends, or one per poll interval), the query over them, and the
answer shaped as the embedded store shapes it (mid-bucket times, gaps where polls are missing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from monitoring.scrape.series import Labels
from monitoring.series import RangeResult, SeriesPoints, Source
from monitoring.series.gaps import max_gap_ms, with_gaps

Matrix = list[tuple[dict[str, str], list[tuple[float, float]]]]
# (expression, first instant ms, last instant ms, step ms) -> matrix
QueryRange = Callable[[str, int, int, int], Matrix]


class PromqlServer(Protocol):
    """What reads PromQL from a Prometheus-compatible server (stores.prometheus.PrometheusStore)."""

    def query_range(self, expr: str, start_ms: int, end_ms: int, step_ms: int) -> Matrix: ...

    def query(self, expr: str, at: datetime) -> Matrix: ...


def ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class Grid:
    """The range asked (`start_ms`..`end_ms`) and the instants evaluated in it: every `step_ms`
    from `first_ms` up to `end_ms`."""

    start_ms: int
    end_ms: int
    step_ms: int
    first_ms: int

    @classmethod
    def buckets(cls, start: datetime, end: datetime, max_points: int) -> Grid:
        """At most `max_points` buckets of the embedded store's width (monitoring.selectors.
        _bucket_s, in whole ms, at least 1 s), evaluated at each bucket's end."""
        width = max(1000, int((end - start).total_seconds() * 1000 / max_points))
        return cls(ms(start), ms(end), width, ms(start) + width)

    @classmethod
    def every(cls, start: datetime, end: datetime, step_ms: int) -> Grid:
        """Every multiple of `step_ms` in the window (the same instants for every series)."""
        first = -(-ms(start) // step_ms) * step_ms
        return cls(ms(start), ms(end), step_ms, first)

    def window(self, *, includes_left_end: bool) -> str:
        """One bucket as a PromQL duration (`avg_over_time(x[<window>])` averages one bucket).

        A bucket is (end - step, end], so that a sample on a boundary counts in one bucket, as
        in the embedded store: the full step where the server's ranges leave out their left end
        (VictoriaMetrics, Prometheus 3), one ms less where they include it (Prometheus 2)."""
        return f"{self.step_ms - 1 if includes_left_end else self.step_ms}ms"


def read(query_range: QueryRange, expr: str, grid: Grid) -> Matrix:
    """Evaluate `expr` at every instant of the grid."""
    return query_range(expr, grid.first_ms, grid.end_ms, grid.step_ms)


def bucketed(
    target_id: int | None,
    key: str,
    labels: Labels,
    points: list[tuple[float, float]],
    grid: Grid,
    interval_s: float | None,
) -> SeriesPoints:
    """Points evaluated at bucket ends, placed mid-bucket as the embedded store places them,
    with a gap wherever polls are missing (monitoring.series.gaps)."""
    width = grid.step_ms
    times, values = with_gaps(
        [int(t * 1000) - width // 2 for t, _ in points],
        [round(v, 6) for _, v in points],
        max_gap_ms=max_gap_ms(width, interval_s),
    )
    return SeriesPoints(
        target_id=target_id, key=key, labels=labels, times_ms=tuple(times), values=tuple(values)
    )


def result(grid: Grid, series: Iterable[SeriesPoints] = ()) -> RangeResult:
    return RangeResult(
        start_ms=grid.start_ms,
        end_ms=grid.end_ms,
        bucket_s=grid.step_ms / 1000,
        source=Source.PROMETHEUS,
        series=tuple(series),
    )
