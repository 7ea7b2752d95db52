"""Reads of the monitoring app: the fleet overview, series (raw or rollup, downsampled), state."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Func, IntegerField, Min, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.health import Section
from monitoring import cluster_nodes, fleet, kinds, pacing, stores
from monitoring.error_text import public_error
from monitoring.models import AlertEvent, PollStatus, Rollup, Sample, Target
from monitoring.retention import rolled_up_to
from monitoring.scrape.series import parse_series_id, series_id
from monitoring.series import SeriesMatch
from monitoring.series.gaps import max_gap_ms, with_gaps

RANGES: dict[str, timedelta] = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
DEFAULT_RANGE = "1h"
# A target is stale when its last success is older than this many poll intervals.
STALE_INTERVALS = 3


def targets_list() -> QuerySet[Target]:
    """Return targets for lists, without their (encrypted) token."""
    return Target.objects.defer("token", "info").order_by("name")


# --- fleet overview -----------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class Tile:
    target: Target
    state: str  # up | down | stale | never | disabled
    open_alerts: int
    values: dict[str, float | None]
    trouble: int

    @property
    def last_error(self) -> str:
        """The summary everyone may read (the overview is for every role; admins find the
        recorded diagnostic on the target's page)."""
        return public_error(
            self.target.last_error_kind or ("error" if self.target.last_error else "")
        )

    @property
    def template(self) -> str:
        """The partial that shows this kind's values."""
        return kinds.get(self.target.kind).tile_template


@dataclass(frozen=True, slots=True, kw_only=True)
class PollingHealth:
    """Whether polls run on time, measured from polls that finished (not from the queue).

    `lag_s` is how long the most overdue enabled target has waited past the time its next poll
    should have finished (its last poll plus its interval, or its backoff); `late_targets`
    counts targets more than one interval overdue; `missed_last_hour` sums the polls that were
    due and never ran (monitoring.pacing), counted as later polls finish.
    """

    lag_s: float
    late_targets: int
    missed_last_hour: int
    most_late: str = ""
    degraded_after_s: float = 60.0

    @property
    def degraded(self) -> bool:
        return self.lag_s > self.degraded_after_s


@dataclass(frozen=True, slots=True)
class Overdue:
    target_id: int
    name: str
    overdue_s: float  # past the time its next poll should have finished
    interval_s: int


def overdue_targets(*, now: datetime) -> list[Overdue]:
    """Return every enabled target whose next poll is overdue, measured from finished polls."""
    rows = Target.objects.filter(enabled=True).values_list(
        "pk",
        "name",
        "poll_interval_s",
        "last_poll_at",
        "created_at",
        "updated_at",
        "last_status",
        "last_error_kind",
        "consecutive_failures",
    )
    out = []
    for pk, name, interval_s, last_poll_at, created, updated, status, kind, failures in rows:
        spacing_s = interval_s * pacing.current_factor(status, kind, failures)
        # Never polled: due one interval after it was created or last changed (enabled).
        since = last_poll_at or max(created, updated)
        overdue_s = (now - since).total_seconds() - spacing_s
        if overdue_s > 0:
            out.append(Overdue(pk, name, overdue_s, interval_s))
    return out


def polling_health(*, now: datetime | None = None) -> PollingHealth:
    """Return the lag and missed polls of the enabled targets (two small queries)."""
    now = now or timezone.now()
    overdue = overdue_targets(now=now)
    worst = max(overdue, key=lambda o: o.overdue_s, default=None)
    # By target, series and time: the sample key's index serves it (a scan of the last hour of
    # every sample by `ts` would not do on a busy fleet's overview).
    enabled = stores.refs(Target.objects.filter(enabled=True))
    missed = stores.current().total(enabled, "poll.missed", now - timedelta(hours=1), now)
    return PollingHealth(
        lag_s=round(worst.overdue_s, 1) if worst else 0.0,
        late_targets=sum(1 for o in overdue if o.overdue_s > o.interval_s),
        missed_last_hour=int(missed or 0),
        most_late=worst.name if worst else "",
        degraded_after_s=settings.MONITORING_LAG_DEGRADED_S,
    )


def polling_section() -> Section:
    """/healthz's polling section (registered in MonitoringConfig.ready): late when degraded."""
    health = polling_health()
    late = ""
    if health.degraded:
        late = (
            f"target {health.most_late!r} is {health.lag_s:.0f} s overdue"
            f" ({health.late_targets} late, {health.missed_last_hour} polls missed in the"
            " last hour)"
        )
    return Section(details=asdict(health), degraded=late)


@dataclass(slots=True, kw_only=True)
class Fleet:
    tiles: list[Tile]
    totals: dict[str, float | int]
    generated_at: datetime = field(default_factory=timezone.now)
    polling: PollingHealth | None = None


def target_state(target: Target, now: datetime) -> str:
    """Return up, down, stale, never or disabled."""
    if not target.enabled:
        return "disabled"
    if target.last_status == PollStatus.NEVER or target.last_poll_at is None:
        return "never"
    if target.last_status == PollStatus.ERROR:
        return "down"
    limit = timedelta(seconds=STALE_INTERVALS * target.poll_interval_s)
    if target.last_success_at is None or now - target.last_success_at > limit:
        return "stale"
    return "up"


_TROUBLE = {"down": 0, "stale": 1, "never": 3, "up": 4, "disabled": 5}


def _tile_values(target: Target, state: str) -> dict[str, float | None]:
    latest = target.latest or {}
    fresh = state in ("up", "stale")

    def get(key: str) -> float | None:
        return latest.get(key) if fresh else None

    return kinds.get(target.kind).tiles(get, fresh)


def fleet_overview(*, now: datetime | None = None) -> Fleet:
    """Return one tile per target, trouble first, and fleet totals (two queries)."""
    now = now or timezone.now()
    targets = list(
        Target.objects.defer("token")
        .annotate(
            open_alerts=Count("alert_events", filter=Q(alert_events__resolved_at__isnull=True))
        )
        .order_by("name")
    )
    tiles = []
    for target in targets:
        state = target_state(target, now)
        trouble = _TROUBLE[state] * 2
        busy_key = kinds.get(target.kind).busy_key
        if state == "up" and (
            target.open_alerts or (busy_key and (target.latest or {}).get(busy_key))
        ):
            trouble = 2 if target.open_alerts else 3
        tiles.append(
            Tile(
                target=target,
                state=state,
                open_alerts=target.open_alerts,
                values=_tile_values(target, state),
                trouble=trouble,
            )
        )
    tiles.sort(key=lambda t: (t.trouble, t.target.name.lower()))
    totals: dict[str, float | int] = defaultdict(float)
    for state in ("up", "down", "stale", "never", "disabled"):
        totals[f"targets_{state}"] = sum(1 for t in tiles if t.state == state)
    totals["targets"] = len(tiles)
    totals["open_alerts"] = sum(t.open_alerts for t in tiles)
    for tile in tiles:
        for name in kinds.get(tile.target.kind).totals:
            value = tile.values.get(name)
            if value is not None:
                totals[name] += value
    return Fleet(
        tiles=tiles, totals=dict(totals), generated_at=now, polling=polling_health(now=now)
    )


# --- series ----------------------------------------------------------------------------------


# A key with one label set, or every label set (labels None).
SeriesRequest = SeriesMatch


def parse_series_requests(items: Iterable[str]) -> list[SeriesRequest]:
    """Parse `key` or `key{label="v"}` strings (the API's `series` parameter)."""
    out = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        key, labels = parse_series_id(item)
        out.append(SeriesRequest(key, series_id("", labels) if "{" in item else None))
    return out


def resolve_range(name: str | None, *, now: datetime | None = None) -> tuple[datetime, datetime]:
    now = now or timezone.now()
    span = RANGES.get(name or DEFAULT_RANGE, RANGES[DEFAULT_RANGE])
    return now - span, now


def posted_window(
    data: Mapping[str, Any], *, default_range: str | None = None
) -> tuple[datetime, datetime] | None:
    """Return the window a form posted: exact times (`start`, `end`) or a named `range`.

    Exact times must carry their UTC offset (the pages post `isoformat()`). Return None when a
    time is malformed, impossible (month 13), naive or missing, or when no known range is given
    and there is no default.
    """
    if data.get("start") or data.get("end"):
        try:
            start = parse_datetime(data.get("start") or "")
            end = parse_datetime(data.get("end") or "")
        except ValueError:
            return None
        if start is None or end is None or timezone.is_naive(start) or timezone.is_naive(end):
            return None
        return start, end
    name = data.get("range")
    name = name if name in RANGES else default_range
    return resolve_range(name) if name else None


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
    requests: Sequence[SeriesRequest],
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
            fleet.fleet_buckets(
                keys, step_s=step_s, bucket=bucket, ts__gte=start, ts__lt=ticks_from
            )
        )
    parts.append(
        fleet.fleet_buckets(
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
        requests=[SeriesRequest(key, "") for key in keys],
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


# --- one target's current state ---------------------------------------------------------------


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


RAY_NODE_KEYS = (
    "ray.node.gpu_utilization_pct",
    "ray.node.gpu_memory_used_mib",
    "ray.node.gpu_memory_available_mib",
    "ray.node.cpu_utilization_pct",
    "ray.node.memory_used_bytes",
    "ray.node.memory_total_bytes",
)
RAY_SERVE_KEYS = (
    "ray.serve.application_status",
    "ray.serve.replicas_healthy",
    "ray.serve.replica_processing_queries",
    "ray.serve.http_requests_per_s",
    "ray.serve.http_latency_ms.p95",
)


PENDING_GROUPS = 'ray.placement_groups{state="PENDING"}'


def ray_state(target: Target) -> dict[str, Any]:
    """Return the Ray page's current state: node x GPU grids, nodes, Serve apps, pending groups."""
    rows = stores.current().latest(stores.ref(target), (*RAY_NODE_KEYS, *RAY_SERVE_KEYS))
    nodes: dict[str, dict[str, Any]] = defaultdict(lambda: {"gpus": {}})
    apps: dict[str, dict[str, Any]] = defaultdict(lambda: {"deployments": {}})
    for row in rows:
        key, labels, value = row.key, row.labels_dict, row.value
        if key.startswith("ray.node."):
            node = nodes[labels.get("node", "")]
            short = key.removeprefix("ray.node.")
            if "gpu" in labels:
                node["gpus"].setdefault(labels["gpu"], {})[short] = value
            else:
                node[short] = value
        else:
            app = apps[labels.get("application", "")]
            short = key.removeprefix("ray.serve.")
            if "deployment" in labels:
                app["deployments"].setdefault(labels["deployment"], {})[short] = value
            else:
                app[short] = value
    gpu_names = (target.info or {}).get("gpus", {})
    # A GPU the exporter lists (ray_node_gpus_available) without a reading this poll (its driver
    # call failed) stays a column with no value: a gap, not a missing GPU and not 0 %.
    for node, present in gpu_names.items():
        if node in nodes and isinstance(present, dict):
            for gpu in present:
                nodes[node]["gpus"].setdefault(str(gpu), {})
    node_names = sorted(nodes)
    gpu_ids = sorted({g for n in nodes.values() for g in n["gpus"]}, key=_natural)

    def grid(metric: str) -> list[list[float | None]]:
        return [[nodes[n]["gpus"].get(g, {}).get(metric) for g in gpu_ids] for n in node_names]

    names = cluster_nodes.node_names(target, node_names)
    listed = (target.info or {}).get("nodes", [])
    pending = (target.latest or {}).get(PENDING_GROUPS)
    return {
        "nodes": [
            {
                "node": n,
                "name": names.get(n, n),
                "gpu_count": len(nodes[n]["gpus"]),
                **{k: v for k, v in nodes[n].items() if k != "gpus"},
            }
            for n in node_names
        ],
        # Nodes Ray itself lists as dead, and expected hosts (inventory, plan) not answering.
        "dead_nodes": [n for n in listed if n.get("state") == "DEAD"],
        "missing_hosts": cluster_nodes.missing_hosts(target, list(names.values()), node_names),
        "nodes_expected": (target.latest or {}).get("ray.cluster.nodes_expected"),
        "gpu_ids": gpu_ids,
        "gpu_names": gpu_names,
        "gpu_utilization_pct": grid("gpu_utilization_pct"),
        "gpu_memory_used_mib": grid("gpu_memory_used_mib"),
        "serve_applications": [
            {
                "application": name,
                "status": app.get("application_status"),
                "running": app.get("application_status") == 6,
                "requests_per_s": app.get("http_requests_per_s"),
                "latency_p95_ms": app.get("http_latency_ms.p95"),
                "deployments": [
                    {
                        "deployment": d,
                        "replicas_healthy": v.get("replicas_healthy"),
                        "processing_queries": v.get("replica_processing_queries"),
                    }
                    for d, v in sorted(app["deployments"].items())
                ],
            }
            for name, app in sorted(apps.items())
        ],
        "placement_groups_pending": (target.info or {}).get("placement_groups_pending", []),
        # Read from Prometheus: Ray's dashboard is not asked (no dead nodes, no pending group's
        # details, no reservations), and the pending groups are only counted.
        "read_only": target.read_only,
        "pending_count": None if pending is None else int(pending),
    }


def _natural(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 30, text)


def recent_events(*, target: Target | None = None, limit: int = 50) -> list[AlertEvent]:
    qs = AlertEvent.objects.select_related("rule").defer("target__token")
    qs = qs.select_related("target")
    if target is not None:
        qs = qs.filter(target=target)
    return list(qs.order_by("-opened_at")[:limit])


@dataclass(frozen=True, slots=True)
class TargetDeleteImpact:
    """What deleting a target removes with it (shown before the user confirms)."""

    samples: int
    rollups: int
    alert_rules: int
    alert_events: int
    # Where its series live outside ServePlan's database: "server" (ServePlan wrote them to a
    # time-series server, which is asked to delete them), "read_only" (a Prometheus that scrapes
    # the target owns them: they stay), "" (none).
    series_elsewhere: str = ""


def target_delete_impact(target: Target) -> TargetDeleteImpact:
    if target.selector:
        elsewhere = "read_only"
    else:
        elsewhere = "" if stores.current().name == stores.EMBEDDED else "server"
    return TargetDeleteImpact(
        series_elsewhere=elsewhere,
        samples=target.samples.count(),
        rollups=target.rollups.count(),
        alert_rules=target.alert_rules.count(),
        alert_events=target.alert_events.count(),
    )
