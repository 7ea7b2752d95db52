"""The embedded store on PostgreSQL holding a team's fleet (issue 19; figures, no assertions):
BENCH_TARGETS targets (default 200; the issue also asks for 2,000) x BENCH_HOURS (default 24)
hours at a 15 s interval, in hourly sample partitions (migration 0016). The counterpart of
bench_tsdb_scale.py, with the same reads.

BENCH_SERIES (default 45, a vLLM poll) series per target; 3 gives bench_tsdb_scale.py's shape
(every target the overview's three fleet keys, the first one also the vLLM page's series), which
keeps 2,000 targets x 24 h within this machine: about 35 million rows and 8 GB against 520
million rows and some 60 GB at 45 series.

The history goes in with generate_series SQL, one statement per hour partition (the sample
keys and indexes are built after the load, as a restore would), together with the one-minute
rollups and the fleet sums the maintenance task would have stored. Then:

1. Dashboard JSON through the API, as dashboard.js asks for it (cache cleared each round): the
   vLLM page of one target (its series, 1 h, 6 h and 24 h) and the overview's fleet-series of
   three keys over every target (1 h, 6 h, 24 h); median and p95 ms.
2. EXPLAIN ANALYZE of every sample and rollup query those reads and one minute's rollup make:
   the indexes each plan uses, and any sequential scan of a sample partition.
3. Retention of one hour of raw samples: deleting its rows in the 5,000-row batches SQLite
   retention still uses (stopped after BENCH_DELETE_S seconds, default 60; rows/s and the time
   that hour would take), against dropping one hour partition.

PostgreSQL only (DATABASE_URL, e.g. through scripts/test-env): a throw-away database is created
and dropped (bench_monitoring.setup). Loopback only; stops by itself. The machine is shared:
read the ratios first.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from datetime import timedelta

from bench_monitoring import p95_ms, run

TARGETS = int(os.environ.get("BENCH_TARGETS", "200"))
HOURS = int(os.environ.get("BENCH_HOURS", "24"))
SERIES = int(os.environ.get("BENCH_SERIES", "45"))
DELETE_S = float(os.environ.get("BENCH_DELETE_S", "60"))
INTERVAL_S = 15
FLEET_KEYS = ("vllm.requests_running", "vllm.generation_tokens_per_s", "vllm.prompt_tokens_per_s")
WINDOWS = ("1h", "6h", "24h")
FK = "monitoring_sample_target_id_fk_monitoring_target_id"  # as migration 0016 names it
VALUE = "((extract(epoch FROM g.ts)::bigint / 15 + t.id + k.n) %% 97)::float8"


def _key_sets() -> tuple[list[str], list[str], list[str]]:
    """(page keys, keys of every target, extra keys of the first target)."""
    from monitoring.charts import vllm_charts

    page = sorted({key for chart in vllm_charts() for key in chart.series})
    base = list(dict.fromkeys([*FLEET_KEYS, *page]))
    if len(base) > SERIES:
        return page, list(FLEET_KEYS), [k for k in page if k not in FLEET_KEYS]
    return page, base + [f"vllm.other_{i}" for i in range(SERIES - len(base))], []


def _sql(cursor, sql: str, params=()) -> None:
    cursor.execute(sql, params)


def _fill(start, end, every: list[str], first_extra: list[str], first_id: int) -> int:
    from django.db import connection

    from monitoring import partitioning
    from monitoring.stores.embedded.retention import create_partitions, drop_partitions

    create_partitions(start, end + timedelta(hours=1))
    drop_partitions(partitioning.floor_hour(start))  # none older than the load
    rows = 0
    with connection.cursor() as cursor:
        # Keys and indexes after the load, as a restore builds them.
        for statement in (
            f"ALTER TABLE monitoring_sample DROP CONSTRAINT {FK}",
            "ALTER TABLE monitoring_sample DROP CONSTRAINT monitoring_sample_key",
            "ALTER TABLE monitoring_sample DROP CONSTRAINT monitoring_sample_pkey",
            "DROP INDEX monitoring_sample_ts",
            "SET synchronous_commit = off",
        ):
            _sql(cursor, statement)
        hour = start
        while hour < end:
            stop = min(hour + timedelta(hours=1), end)
            for keys, where in ((every, ""), (first_extra, f"AND t.id = {int(first_id)}")):
                if not keys:
                    continue
                grid = (
                    "generate_series(%s::timestamptz, %s::timestamptz - interval '1 s', {step})"
                    " g(ts)"
                )
                targets = (
                    "monitoring_target t CROSS JOIN unnest(%s::text[]) WITH ORDINALITY k(key, n)"
                )
                _sql(
                    cursor,
                    "INSERT INTO monitoring_sample (target_id, series, labels, ts, value)"
                    f" SELECT t.id, k.key, '', g.ts, {VALUE}"
                    f" FROM {targets} CROSS JOIN {grid.format(step="interval '15 s'")}"
                    f" WHERE t.name LIKE 'bench-%%' {where}",
                    [keys, hour, stop],
                )
                rows += cursor.rowcount
                _sql(
                    cursor,
                    "INSERT INTO monitoring_rollup"
                    " (target_id, series, labels, minute, count, min, avg, max, last)"
                    f" SELECT t.id, k.key, '', g.ts, 4, {VALUE}, {VALUE}, {VALUE}, {VALUE}"
                    f" FROM {targets} CROSS JOIN {grid.format(step="interval '1 minute'")}"
                    f" WHERE t.name LIKE 'bench-%%' {where}",
                    [keys, hour, stop],
                )
            hour = stop
            print(f"    {rows:,} sample rows up to {stop:%H:%M}", flush=True)
        for statement in (
            "ALTER TABLE monitoring_sample ADD CONSTRAINT monitoring_sample_pkey"
            " PRIMARY KEY (id, ts)",
            "ALTER TABLE monitoring_sample ADD CONSTRAINT monitoring_sample_key"
            " UNIQUE (target_id, series, ts, labels)",
            "CREATE INDEX monitoring_sample_ts ON monitoring_sample (ts)",
            f"ALTER TABLE monitoring_sample ADD CONSTRAINT {FK} FOREIGN KEY (target_id)"
            " REFERENCES monitoring_target (id) DEFERRABLE INITIALLY DEFERRED",
            "ANALYZE",
        ):
            _sql(cursor, statement)
    return rows


def _fleet_sums(start, end) -> None:
    from monitoring.fleet import MINUTE_STEP_S, TICK_STEP_S
    from monitoring.models import FleetSum, RollupCursor
    from monitoring.stores.embedded.retention import floor_minute

    cursor_at = floor_minute(end - timedelta(minutes=2))
    values = {key: float(TARGETS * 48) for key in FLEET_KEYS}
    minutes = int((cursor_at - start).total_seconds() // 60)
    rows = [
        FleetSum(ts=start + timedelta(minutes=i), step_s=MINUTE_STEP_S, values=values)
        for i in range(minutes)
    ]
    ticks = int((end - cursor_at).total_seconds() // TICK_STEP_S)
    rows += [
        FleetSum(
            ts=cursor_at + timedelta(seconds=TICK_STEP_S * i), step_s=TICK_STEP_S, values=values
        )
        for i in range(ticks)
    ]
    FleetSum.objects.bulk_create(rows, batch_size=2000)
    RollupCursor.objects.create(name="samples", rolled_up_to=cursor_at)


def _indexes(plan: dict, found: set[str], scans: set[str]) -> None:
    if "Index Name" in plan:
        found.add(plan["Index Name"])
    read = plan.get("Actual Rows", 0) + plan.get("Rows Removed by Filter", 0)
    relation = plan.get("Relation Name", "")
    if plan.get("Node Type") == "Seq Scan" and "monitoring_sample" in relation and read:
        scans.add(relation)  # of a partition holding rows (empty ones are always seq-scanned)
    for child in plan.get("Plans", []):
        _indexes(child, found, scans)


def _explain(what: str, read) -> None:
    """EXPLAIN ANALYZE the sample and rollup queries of `read` (run once, rolled back)."""
    import json

    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    with transaction.atomic(), CaptureQueriesContext(connection) as captured:
        read()
        transaction.set_rollback(True)
    found: set[str] = set()
    scans: set[str] = set()
    ms = 0.0
    for query in captured.captured_queries:
        sql = query["sql"]
        if not any(t in sql for t in ("monitoring_sample", "monitoring_rollup")):
            continue
        if sql.split()[0].upper() not in ("SELECT", "INSERT", "DELETE", "WITH"):
            continue
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
            plan = cursor.fetchone()[0]
            transaction.set_rollback(True)
        plan = (json.loads(plan) if isinstance(plan, str) else plan)[0]
        ms += plan["Execution Time"]
        _indexes(plan["Plan"], found, scans)
    seq = f"; seq scans: {_by_index(scans)}" if scans else ""
    print(f"  {what}: {ms:.0f} ms, indexes {_by_index(found) or 'none'}{seq}")


def _by_index(names: set[str]) -> str:
    """`monitoring_sample_<hour>_ts_idx` of 24 hours as `<hour>_ts_idx x 24`."""
    counts = Counter(re.sub(r"_p\d{10}", "_<hour>", name) for name in names)
    return ", ".join(f"{name} x {n}" if n > 1 else name for name, n in sorted(counts.items()))


def main() -> None:
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.utils import timezone

    from monitoring import partitioning
    from monitoring.models import Sample, Target
    from monitoring.stores.embedded.retention import (
        _delete_batches,
        _rollup_minute,
        drop_partitions,
    )

    if connection.vendor != "postgresql":
        print("PostgreSQL only: set DATABASE_URL (scripts/test-env does)")
        return
    Target.objects.bulk_create(
        Target(name=f"bench-{i:04d}", kind="vllm", base_url=f"http://127.0.0.1:9/{i}")
        for i in range(TARGETS)
    )
    first = Target.objects.order_by("pk").first()
    page, every, first_extra = _key_sets()
    now = timezone.now()
    end = now.replace(second=now.second - now.second % INTERVAL_S, microsecond=0)
    start = end - timedelta(hours=HOURS)
    print(
        f"load: {TARGETS} targets x {HOURS} h at {INTERVAL_S} s, {len(every)} series each", end=""
    )
    print(f" (+{len(first_extra)} on the first)" if first_extra else "")
    started = time.perf_counter()
    rows = _fill(start, end, every, first_extra, first.pk)
    _fleet_sums(start, end)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_total_relation_size('monitoring_sample'::regclass)")
        cursor.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(i.inhrelid)), 0) FROM pg_inherits i"
            " WHERE i.inhparent = 'monitoring_sample'::regclass"
        )
        size = cursor.fetchone()[0]
    print(
        f"  {rows:,} sample rows, {size / 2**30:.1f} GB with indexes, loaded and indexed in ",
        end="",
    )
    print(f"{time.perf_counter() - started:.0f} s")

    user = get_user_model().objects.create_user(username="bench-viewer", password="x" * 20)
    client = Client()
    client.force_login(user)
    fleet = ",".join(FLEET_KEYS)
    reads = {}
    for window in WINDOWS:
        reads[f"vLLM page, {len(page)} series, {window}"] = (
            f"/api/v1/monitoring/targets/{first.pk}/series/?series={','.join(page)}&range={window}"
        )
        reads[f"fleet-series, 3 keys x {TARGETS} targets, {window}"] = (
            f"/api/v1/monitoring/fleet-series/?series={fleet}&range={window}"
        )
    print("dashboard JSON (median, p95):")

    def get(url: str):
        cache.clear()
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code, response.content[:300])
        return response

    for what, url in reads.items():
        median, p95 = p95_ms(lambda u=url: get(u))
        print(f"  {what}: median {median:.0f} ms, p95 {p95:.0f} ms")

    print("EXPLAIN ANALYZE (indexes the plans use):")
    for what, url in reads.items():
        _explain(what, lambda u=url: get(u))
    minute = (end - timedelta(hours=HOURS // 2)).replace(second=0)
    _explain("rollup of one minute (every target)", lambda: _rollup_minute(minute))
    _explain(
        "a target's deletion (its samples)",
        lambda: Sample.objects.filter(target_id=first.pk).delete(),
    )

    print("retention of one hour of raw samples:")
    oldest = partitioning.partition_at(start + timedelta(hours=1))
    second = partitioning.partition_at(oldest.end)
    queryset = Sample.objects.filter(ts__lt=oldest.end)
    started, deleted, done = time.perf_counter(), 0, False
    while not done and time.perf_counter() - started < DELETE_S:
        count, done = _delete_batches(queryset, 5000, 10)
        deleted += count
    took = time.perf_counter() - started
    hour_rows = rows / HOURS
    rate = deleted / took
    print(f"  row delete, 5,000-row batches: {deleted:,} rows in {took:.1f} s ({rate:,.0f} rows/s;")
    print(f"    one hour, {hour_rows:,.0f} rows, would take {hour_rows / max(rate, 1):.0f} s)")
    started = time.perf_counter()
    dropped = drop_partitions(second.end)
    took = time.perf_counter() - started
    print(f"  partition drop: {len(dropped)} hour partitions ({', '.join(dropped)})", end="")
    print(f" in {took * 1000:.0f} ms")


if __name__ == "__main__":
    run(main)
