"""Reads of the monitoring app: the fleet overview, series (raw or rollup, downsampled), state."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.health import Section
from monitoring import pacing, stores
from monitoring.error_text import public_error
from monitoring.machines import cluster_nodes
from monitoring.models import AlertEvent, Target
from monitoring.scrape.series import parse_series_id, series_id
from monitoring.series import SeriesMatch, StoreUnavailable
from monitoring.targets import kinds
from monitoring.targets.state import target_state

RANGES: dict[str, timedelta] = {
    "15m": timedelta(minutes=15),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
DEFAULT_RANGE = "1h"


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
    try:
        rows = stores.current().latest(stores.ref(target), (*RAY_NODE_KEYS, *RAY_SERVE_KEYS))
    except StoreUnavailable:  # a read-only target's Prometheus: its poll's error says so
        rows = []
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
