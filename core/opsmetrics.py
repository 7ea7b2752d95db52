"""ServePlan's own Prometheus metrics, for the operators who run it (GET /metrics).

Counters live in the database (core.OpsCounter) so that every worker, on any machine, adds to
the same series; gauges are computed at scrape time by collectors the apps register.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from django.db import connection
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric

from core.models import OpsCounter

# name -> help. Every counter ServePlan increments is declared here.
COUNTERS: dict[str, str] = {
    "serveplan_polls": "Target polls finished, by target kind and outcome (ok or error kind).",
    "serveplan_alert_events": "Alert events, by transition (opened or resolved).",
    "serveplan_polls_missed": "Target polls that were due and never ran (expired, starved).",
    "serveplan_remote_write_samples": (
        "Samples sent to the time-series server by remote write, by outcome (written;"
        " dropped: the retry buffer was full or the server refused them; target_deleted: not"
        " sent, their target was deleted first)."
    ),
}
# name -> (help, bucket upper bounds in seconds)
HISTOGRAMS: dict[str, tuple[str, tuple[float, ...]]] = {
    "serveplan_poll_duration_seconds": (
        "Wall time of one target poll (fetch, parse, store).",
        (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
    ),
}

GaugeCollector = Callable[[], Iterable[Metric]]
_gauge_collectors: list[GaugeCollector] = []


def register_gauges(collector: GaugeCollector) -> None:
    """Add a function that yields gauge families at scrape time (apps call this in ready())."""
    if collector not in _gauge_collectors:
        _gauge_collectors.append(collector)


def _label_key(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def _parse_label_key(key: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in key.split(",") if part)


Count = tuple[str, Mapping[str, str] | None, float]  # (counter name, labels, amount)


def increment(name: str, labels: Mapping[str, str] | None = None, amount: float = 1.0) -> None:
    """Add `amount` to the counter `name` with `labels`, creating it on first use."""
    add([(name, labels, amount)])


def add(counts: Iterable[Count]) -> None:
    """Add every (name, labels, amount) in one statement (an upsert), creating rows as needed.

    One write instead of one per counter: a poll adds three (its outcome and its duration
    histogram's bucket and sum). Rows are written in a fixed order, so two workers adding to the
    same counters wait for each other instead of deadlocking.
    """
    merged: dict[tuple[str, str], float] = defaultdict(float)
    for name, labels, amount in counts:
        if name not in COUNTERS and not any(name.startswith(h) for h in HISTOGRAMS):
            raise KeyError(f"undeclared ServePlan metric {name!r}")
        merged[(name, _label_key(labels or {}))] += amount
    if not merged:
        return
    rows = sorted(merged.items())
    table = connection.ops.quote_name(OpsCounter._meta.db_table)
    values = ", ".join(["(%s, %s, %s)"] * len(rows))
    params = [p for (name, key), amount in rows for p in (name, key, amount)]
    with connection.cursor() as cursor:  # PostgreSQL and SQLite (3.24+) both upsert so
        cursor.execute(
            f"INSERT INTO {table} (name, labels, value) VALUES {values}"  # noqa: S608
            f" ON CONFLICT (name, labels) DO UPDATE SET value = {table}.value + excluded.value",
            params,
        )


def observation(name: str, value: float, labels: Mapping[str, str] | None = None) -> list[Count]:
    """Return the counts one observation of the histogram `name` adds (for `add`).

    Only the one bucket the value falls in is stored (two counters per observation, not one per
    bucket); render() makes the buckets cumulative and derives the count.
    """
    _, buckets = HISTOGRAMS[name]
    bound = next((_format_bound(b) for b in buckets if value <= b), "+Inf")
    return [
        (f"{name}_bucket", {**(labels or {}), "le": bound}, 1.0),
        (f"{name}_sum", labels, value),
    ]


def observe(name: str, value: float, labels: Mapping[str, str] | None = None) -> None:
    """Record one observation of the histogram `name` (one write)."""
    add(observation(name, value, labels))


def _format_bound(bound: float) -> str:
    return repr(float(bound))


class _DatabaseCollector:
    def collect(self) -> Iterable[Metric]:
        rows: dict[str, list[tuple[dict[str, str], float]]] = defaultdict(list)
        for name, labels, value in OpsCounter.objects.values_list("name", "labels", "value"):
            rows[name].append((_parse_label_key(labels), value))
        yield from _counters(rows)
        yield from _histograms(rows)
        for collector in _gauge_collectors:
            yield from collector()


def _counters(rows: Mapping[str, list[tuple[dict[str, str], float]]]) -> Iterable[Metric]:
    for name, help_text in COUNTERS.items():
        series = rows.get(name, [])
        label_names = sorted({k for labels, _ in series for k in labels})
        family = CounterMetricFamily(name, help_text, labels=label_names)
        for labels, value in series:
            family.add_metric([labels.get(k, "") for k in label_names], value)
        yield family


def _histograms(rows: Mapping[str, list[tuple[dict[str, str], float]]]) -> Iterable[Metric]:
    for name, (help_text, buckets) in HISTOGRAMS.items():
        bounds = [_format_bound(b) for b in buckets] + ["+Inf"]
        per_series: dict[str, tuple[dict[str, str], dict[str, float]]] = {}
        for labels, value in rows.get(f"{name}_bucket", []):
            series = {k: v for k, v in labels.items() if k != "le"}
            per_series.setdefault(_label_key(series), (series, {}))[1][labels["le"]] = value
        sums = {_label_key(labels): v for labels, v in rows.get(f"{name}_sum", [])}
        label_names = sorted({k for labels, _ in per_series.values() for k in labels})
        family = HistogramMetricFamily(name, help_text, labels=label_names)
        for key, (labels, in_bucket) in per_series.items():
            cumulative, running = [], 0.0
            for bound in bounds:
                running += in_bucket.get(bound, 0.0)
                cumulative.append((bound, running))
            family.add_metric(
                [labels.get(k, "") for k in label_names], cumulative, sums.get(key, 0.0)
            )
        yield family


def render() -> bytes:
    """Return the Prometheus text exposition of every ServePlan metric."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_DatabaseCollector())  # type: ignore[arg-type]
    return generate_latest(registry)
