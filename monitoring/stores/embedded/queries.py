"""The embedded store's reads: a range of series, fleet sums and a poll's samples, in SQL.

The Sample, Rollup and FleetSum tables are read here and only here (the EmbeddedStore adapts
these reads to the series-store interface; selectors and views go through the interface).
Ranges up to MONITORING_RAW_QUERY_MAX_H come from raw samples, longer ones from the one-minute
rollups plus the raw samples after the rollup cursor; the buckets are averaged in the database.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Func, IntegerField, Min, QuerySet, Sum

from monitoring import fleet
from monitoring.models import Rollup, Sample, Target
from monitoring.scrape.series import parse_series_id
from monitoring.series import SeriesMatch
from monitoring.series.gaps import max_gap_ms, with_gaps
from monitoring.stores.embedded.fleet_sums import fleet_buckets
from monitoring.stores.embedded.retention import rolled_up_to


def _reads_rollups(start: datetime, end: datetime) -> bool:
    """Return whether a range is long enough to read one-minute rollups (then raw samples only
    after the rollup cursor, the last few minutes) instead of every poll."""
    return end - start > timedelta(hours=settings.MONITORING_RAW_QUERY_MAX_H)


def _bucket_s(start: datetime, end: datetime, max_points: int) -> float:
    return max(1.0, (end - start).total_seconds() / max_points)


def _ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def series_query(
    *,
    target_ids: Sequence[int],
    requests: Sequence[SeriesMatch],
    start: datetime,
    end: datetime,
    max_points: int | None = None,
) -> dict[str, Any]:
    """Return the requested series of the given targets between start and end.

    Ranges up to MONITORING_RAW_QUERY_MAX_H (15 minutes) come from raw samples; longer ones from
    one-minute rollups, plus raw samples after the last rolled-up minute. Each series is
    downsampled to at most `max_points` points by averaging time buckets. Works the same on
    SQLite and PostgreSQL.
    """
    max_points = max_points or settings.MONITORING_MAX_POINTS_PER_SERIES
    keys = sorted({r.key for r in requests})
    if not keys or not target_ids:
        return {"start": _ms(start), "end": _ms(end), "source": "raw", "series": []}
    exact = {(r.key, r.labels) for r in requests if r.labels is not None}
    whole = {r.key for r in requests if r.labels is None}
    # Keys asked for with labels: filter their rows by label set (whole keys need no check).

    def wanted(key: str, labels: str) -> bool:
        return key in whole or (key, labels) in exact

    bucket_s = _bucket_s(start, end, max_points)
    start_s = start.timestamp()
    queries = []
    raw_from = start
    source = "raw"
    if _reads_rollups(start, end):
        cursor = rolled_up_to()
        if cursor is not None and cursor > start:
            source = "rollup"
            raw_from = min(cursor, end)
            queries.append(
                Rollup.objects.filter(
                    target_id__in=target_ids,
                    series__in=keys,
                    minute__gte=start,
                    minute__lt=raw_from,
                )
                .annotate(bucket=TimeBucket("minute", start_s, bucket_s))
                .values_list("target_id", "series", "labels", "bucket")
                .annotate(total=Sum(F("avg") * F("count")), n=Sum("count"))
                .order_by("target_id", "series", "labels", "bucket")
            )
    # Downsampled in the database: one row per series and time bucket, whatever the range.
    queries.append(
        Sample.objects.filter(
            target_id__in=target_ids, series__in=keys, ts__gte=raw_from, ts__lte=end
        )
        .annotate(bucket=TimeBucket("ts", start_s, bucket_s))
        .values_list("target_id", "series", "labels", "bucket")
        .annotate(total=Sum("value"), n=Count("id"))
        .order_by("target_id", "series", "labels", "bucket")
    )
    acc: dict[tuple[int, str, str], tuple[list[int], list[float], list[float]]] = {}
    for query in queries:  # rollups first, then raw: buckets arrive in time order per series
        for target_id, key, labels, bucket, total, count in _fetch(query):
            if exact and not wanted(key, labels):
                continue
            entry = acc.get((target_id, key, labels))
            if entry is None:
                entry = acc[(target_id, key, labels)] = ([], [], [])
            buckets, totals, counts = entry
            if buckets and buckets[-1] == bucket:  # the bucket where rollups meet raw
                totals[-1] += total
                counts[-1] += count
            else:
                buckets.append(bucket)
                totals.append(total)
                counts.append(count)
    out = []
    start_ms = _ms(start)
    width_ms = bucket_s * 1000
    intervals_s = dict(
        Target.objects.filter(pk__in=target_ids).values_list("pk", "poll_interval_s")
    )
    for (target_id, key, labels), (buckets, totals, counts) in sorted(acc.items()):
        times, values = with_gaps(
            [start_ms + int((b + 0.5) * width_ms) for b in buckets],
            [round(t / c, 6) for t, c in zip(totals, counts, strict=True)],
            max_gap_ms=max_gap_ms(width_ms, intervals_s.get(target_id)),
        )
        out.append(
            {
                "target": target_id,
                "key": key,
                "labels": dict(parse_series_id("x" + labels)[1]) if labels else {},
                "id": key + labels,
                "t": times,
                "v": values,
            }
        )
    return {
        "start": _ms(start),
        "end": _ms(end),
        "bucket_s": bucket_s,
        "source": source,
        "series": out,
    }


def _fetch(query: QuerySet) -> list[tuple[Any, ...]]:
    """Run an aggregate query and return its rows as the database gives them.

    The rows hold only ints, floats and strings: skipping the ORM's per-row converters matters
    for the ~17,000 rows of a dashboard (17 series x 1,000 points).
    """
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class TimeBucket(Func):
    """The index of the `width_s`-wide time bucket of a datetime column, counted from `start_s`.

    Computed by the database (no per-row Python): SQLite parses its UTC text with julianday(),
    PostgreSQL extracts the epoch. Rows are never before `start_s`, so truncation is floor.
    """

    output_field = IntegerField()

    def __init__(self, column: str, start_s: float, width_s: float) -> None:
        super().__init__(F(column))
        self.start_s = float(start_s)
        self.width_s = float(width_s)

    def _sql(self, compiler: Any, connection: Any, epoch: str, cast: str) -> Any:
        column, params = compiler.compile(self.source_expressions[0])
        sql = cast.format(f"(({epoch.format(column)}) - %s) / %s")
        return sql, (*params, self.start_s, self.width_s)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self._sql(
            compiler, connection, "(julianday({}) - 2440587.5) * 86400.0", "CAST({} AS INTEGER)"
        )

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self._sql(
            compiler,
            connection,
            "EXTRACT(EPOCH FROM {})::double precision",
            "FLOOR({})::bigint",
        )

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self._sql(compiler, connection, "UNIX_TIMESTAMP({})", "FLOOR({})")


def fleet_series(
    *,
    keys: Sequence[str],
    start: datetime,
    end: datetime,
    max_points: int | None = None,
    target_ids: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Return, per unlabelled key, its sum over the targets (all by default) per time bucket.

    The polled fleet's sums are read from the rows stored once per scheduler tick
    (monitoring.fleet), never from the targets' samples: minute averages before the rollup
    cursor when the range is longer than MONITORING_RAW_QUERY_MAX_H, ticks after it, one query
    per step whatever the keys. Only a subset of the targets is summed from its series.
    """
    keys = list(keys)
    max_points = max_points or settings.MONITORING_MAX_POINTS_PER_SERIES
    # The stored sums cover every polled target (a read-only one's store sums it); a smaller
    # set is summed from its own series.
    if target_ids is not None and not fleet.covers_polled_fleet(target_ids):
        return _summed_series(target_ids, keys, start, end, max_points)
    bucket_s = _bucket_s(start, end, max_points)
    bucket = TimeBucket("ts", start.timestamp(), bucket_s)
    source, ticks_from, step_s = "raw", start, fleet.TICK_STEP_S
    parts = []
    cursor = rolled_up_to() if _reads_rollups(start, end) else None
    if cursor is not None and cursor > start:
        source, ticks_from, step_s = "rollup", min(cursor, end), fleet.MINUTE_STEP_S
        parts.append(
            fleet_buckets(keys, step_s=step_s, bucket=bucket, ts__gte=start, ts__lt=ticks_from)
        )
    parts.append(
        fleet_buckets(
            keys, step_s=fleet.TICK_STEP_S, bucket=bucket, ts__gte=ticks_from, ts__lte=end
        )
    )
    start_ms = _ms(start)
    width_ms = bucket_s * 1000
    summed: dict[str, dict[int, float]] = {}
    for key in keys:
        points: dict[int, float] = {}
        for part in parts:  # minutes, then ticks: the bucket where they meet takes the ticks
            points.update(part[key])
        summed[key] = {start_ms + int((b + 0.5) * width_ms): v for b, v in points.items()}
    data = {"start": start_ms, "end": _ms(end), "bucket_s": bucket_s, "source": source}
    return _with_sums(data, summed, max_gap_ms(width_ms, max(step_s, fleet.TICK_LATE_S)))


def _summed_series(
    target_ids: Sequence[int],
    keys: list[str],
    start: datetime,
    end: datetime,
    max_points: int,
) -> dict[str, Any]:
    """Return the sums over some targets, from their own series (one series query)."""
    data = series_query(
        target_ids=target_ids,
        requests=[SeriesMatch(key, "") for key in keys],
        start=start,
        end=end,
        max_points=max_points,
    )
    summed: dict[str, dict[int, float]] = {key: defaultdict(float) for key in keys}
    for series in data["series"]:
        for t, v in zip(series["t"], series["v"], strict=True):
            if v is not None:
                summed[series["key"]][t] += v
    shortest_s = Target.objects.filter(pk__in=target_ids).aggregate(s=Min("poll_interval_s"))["s"]
    width_ms = float(data.get("bucket_s", 1.0)) * 1000
    return _with_sums(data, summed, max_gap_ms(width_ms, shortest_s))


def _with_sums(
    data: dict[str, Any], summed: dict[str, dict[int, float]], gap_ms: float
) -> dict[str, Any]:
    data["series"] = []
    for key, points in summed.items():
        ordered = sorted(points.items())
        times, values = with_gaps(
            [t for t, _ in ordered], [round(v, 6) for _, v in ordered], max_gap_ms=gap_ms
        )
        data["series"].append(
            {"target": None, "key": key, "labels": {}, "id": key, "t": times, "v": values}
        )
    return data


def latest_samples_at(
    target_id: int, ts: datetime, keys: Iterable[str]
) -> list[tuple[str, dict[str, str], float]]:
    """Return (key, labels, value) of the target's samples of the given keys stored at `ts`."""
    rows = Sample.objects.filter(target_id=target_id, series__in=list(keys), ts=ts).values_list(
        "series", "labels", "value"
    )
    return [
        (key, parse_series_id("x" + labels)[1] if labels else {}, value)
        for key, labels, value in rows
    ]
