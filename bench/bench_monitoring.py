"""Monitoring benchmarks (figures for issue 7; no assertions).

1. The series endpoint for 24 h of one vLLM target stored at 5 s resolution (p95 ms), as the
   vLLM page asks for it (17 series); also the 6 h raw path.
2. The fleet overview for 200 targets: page and JSON (p95 ms).
3. One worker process polling 500 simulated vLLM targets (the poll_target task, run serially
   as a solo worker would): polls/s, samples/s stored, CPU % of that process; the simulator
   runs in four processes of its own.

Runs on a throw-away database: SQLite by default, PostgreSQL when DATABASE_URL points to one
(a temporary `serveplan_bench_monitoring_<pid>` database is created and dropped: benches run
side by side on one server do not share it).
"""

from __future__ import annotations

import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ROUNDS = 30
ORIGINAL_DB_NAME: str | None = None  # set when a throw-away PostgreSQL database is created


def setup() -> None:
    tmp = tempfile.mkdtemp(prefix="serveplan-bench-monitoring-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ["SERVEPLAN_VAR_DIR"] = tmp
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "sqlite":
        global ORIGINAL_DB_NAME
        ORIGINAL_DB_NAME = connection.settings_dict["NAME"]
        connection.settings_dict.setdefault("TEST", {})["NAME"] = (
            f"serveplan_bench_monitoring_{os.getpid()}"
        )
        connection.creation.create_test_db(verbosity=0, autoclobber=True)
    else:
        call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]


def _analyze() -> None:
    """Refresh the planner statistics after a bulk load, as autovacuum would in production."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def p95_ms(fn, rounds: int = ROUNDS) -> tuple[float, float]:
    fn()  # warm up
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def viewer_client():
    from django.contrib.auth import get_user_model
    from django.test import Client

    user, _ = get_user_model().objects.get_or_create(username="bench-viewer")
    client = Client()
    client.force_login(user)
    return client


def bench_series() -> None:
    from django.utils import timezone

    from monitoring.charts import vllm_charts
    from monitoring.models import Sample
    from monitoring.services import target_create
    from monitoring.stores.embedded.retention import rollup_run

    target = target_create(name="bench-vllm", kind="vllm", base_url="http://127.0.0.1:9/v")
    keys = sorted({key for chart in vllm_charts() for key in chart.series})
    # A vLLM poll stores ~45 series; the page reads 17 of them. Store 45 for realistic tables.
    extra = [f"vllm.other_{i}" for i in range(45 - len(keys))]
    now = timezone.now().replace(microsecond=0)
    start = now - timedelta(hours=24)
    steps = 24 * 3600 // 5
    started = time.perf_counter()
    batch = []
    for i in range(steps):
        ts = start + timedelta(seconds=5 * i)
        for n, key in enumerate(keys + extra):
            batch.append(
                Sample(target=target, series=key, labels="", ts=ts, value=float(i % 97 + n))
            )
        if len(batch) >= 20_000:
            Sample.objects.bulk_create(batch, batch_size=5000)
            batch = []
    Sample.objects.bulk_create(batch, batch_size=5000)
    rows = Sample.objects.count()
    took = time.perf_counter() - started
    width = len(keys) + len(extra)
    print(f"  stored {rows:,} samples (24 h x 5 s x {width} series) in {took:.1f} s")
    from django.conf import settings

    _analyze()
    settings.MONITORING_ROLLUP_MAX_MINUTES_PER_RUN = 2000
    settings.MONITORING_ROLLUP_MAX_ROWS_PER_RUN = 10**9
    started = time.perf_counter()
    rollup_run(now=now)
    print(f"  rolled up 24 h into 1-minute rollups in {time.perf_counter() - started:.1f} s")
    _analyze()
    client = viewer_client()
    url = f"/api/v1/monitoring/targets/{target.pk}/series/"
    series = ",".join(keys)
    for name in ("24h", "6h", "1h"):

        def get(name=name):
            response = client.get(url, {"series": series, "range": name})
            assert response.status_code == 200, response.content[:300]
            return response

        body = get().json()
        points = max(len(s["t"]) for s in body["series"])
        median, p95 = p95_ms(get)
        print(
            f"  series endpoint, {len(keys)} series, range {name} ({body['source']}, "
            f"<= {points} points each): median {median:.0f} ms, p95 {p95:.0f} ms"
        )


def bench_overview() -> None:
    from django.utils import timezone

    from monitoring.models import AlertEvent, AlertRule, PollStatus, Target
    from monitoring.services import target_create

    now = timezone.now()
    for i in range(200):
        target = target_create(
            name=f"fleet-{i:03d}",
            kind="ray" if i % 20 == 0 else "vllm",
            base_url=f"http://127.0.0.1:9/{i}",
        )
        latest = {
            "vllm.requests_running": 12.0,
            "vllm.requests_waiting": float(i % 3),
            "vllm.prompt_tokens_per_s": 900.0,
            "vllm.generation_tokens_per_s": 450.0,
            "vllm.kv_cache_usage_pct": 55.0,
            "vllm.ttft_seconds.p95": 0.31,
            "vllm.completion_ratio": 0.99,
        }
        Target.objects.filter(pk=target.pk).update(
            last_status=PollStatus.ERROR if i % 25 == 0 else PollStatus.OK,
            last_poll_at=now,
            last_success_at=now,
            latest=latest,
        )
        if i % 10 == 0:
            rule = AlertRule.objects.filter(target=target).first()
            AlertEvent.objects.create(
                rule=rule, target=target, opened_at=now, value=1, last_value=1, message="x"
            )
    client = viewer_client()
    for url in ("/monitoring/", "/monitoring/overview/tiles/", "/api/v1/monitoring/overview/"):
        median, p95 = p95_ms(lambda url=url: client.get(url))
        count = Target.objects.count()
        print(f"  fleet overview, {count} targets, {url}: median {median:.0f} ms, p95 {p95:.0f} ms")


def _poll_round(ids: list[int], threads: int) -> None:
    from django.db import connection

    from monitoring.tasks import poll_target

    if threads == 1:
        for target_id in ids:
            poll_target.apply(kwargs={"target_id": target_id})
        return

    def run(target_id: int) -> None:
        try:
            poll_target.apply(kwargs={"target_id": target_id})
        finally:
            connection.close()

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, ids))


def start_simulators(arguments: list[list[str]]) -> tuple[list[subprocess.Popen], list[list[dict]]]:
    """Start one simulator process per argument list; return them and the targets of each.

    One simulator process renders ~20-40 payloads/s (Python, one GIL): several are needed so
    that the simulator, not the worker, is not what is measured.
    """
    sims = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "monitoring.simulator",
                "--port",
                "0",
                "--no-ray",
                "--no-faults",
                *args,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for args in arguments
    ]
    return sims, [json.loads(sim.stdout.readline()) for sim in sims]


def stop_simulators(sims: list[subprocess.Popen]) -> None:
    for sim in sims:
        sim.terminate()
        sim.wait(timeout=30)


def shares(count: int, processes: int) -> list[tuple[int, int]]:
    """Split `count` targets over `processes`: (first index, how many) for each process."""
    per = -(-count // processes)
    return [(n * per, min(per, count - n * per)) for n in range(processes)]


def _start_simulators(count: int, processes: int) -> tuple[list[subprocess.Popen], list[dict]]:
    """Start `processes` simulator processes serving `count` vLLM targets in all."""
    sims, served = start_simulators(
        [["--vllm", str(n), "--gpu-machines", "0"] for _first, n in shares(count, processes)]
    )
    targets = [{**t, "name": f"p{n}-{t['name']}"} for n, ts in enumerate(served) for t in ts]
    return sims, targets


@dataclass(frozen=True, slots=True)
class PollRound:
    """One timed round of polls by one worker process."""

    label: str
    wall_s: float
    cpu_s: float
    stored: int
    up: int
    interval_s: float

    @property
    def verdict(self) -> str:
        return "keeps up with" if self.wall_s < self.interval_s else "FALLS BEHIND"


def timed_poll_rounds(ids: list[int], interval_s: float) -> Iterator[PollRound]:
    """Poll every target once untimed (no previous snapshot: no rates yet), then time a round
    run serially as a solo worker would and one on a pool of 8 threads."""
    from monitoring.models import Sample, Target

    _poll_round(ids, 1)
    for threads, label in ((1, "solo pool (serial)"), (8, "threads pool, 8 threads")):
        time.sleep(1.0)
        before = Sample.objects.count()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        _poll_round(ids, threads)
        wall = time.perf_counter() - started
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        yield PollRound(
            label=label,
            wall_s=wall,
            cpu_s=(cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
            stored=Sample.objects.count() - before,
            up=Target.objects.filter(pk__in=ids, last_status="ok").count(),
            interval_s=interval_s,
        )


def bench_polling(count: int = 500, interval_s: int = 15, processes: int = 4) -> None:
    from monitoring.services import target_create

    sims, targets = _start_simulators(count, processes)
    try:
        ids = [
            target_create(
                name=f"sim-{t['name']}",
                kind=t["kind"],
                base_url=t["base_url"],
                poll_interval_s=interval_s,
            ).pk
            for t in targets
        ]
        for r in timed_poll_rounds(ids, interval_s):
            print(
                f"  one worker process, {r.label}, {len(ids)} targets: {r.wall_s:.1f} s per round "
                f"({r.verdict} a {interval_s} s interval), {len(ids) / r.wall_s:.0f} polls/s, "
                f"{r.stored / r.wall_s:,.0f} samples/s stored ({r.stored / len(ids):.0f} per "
                f"poll), CPU {100 * r.cpu_s / r.wall_s:.0f} % of one core = "
                f"{1000 * r.cpu_s / len(ids):.1f} ms CPU per poll, {r.up}/{len(ids)} targets up"
            )
    finally:
        stop_simulators(sims)


def run(body: Callable[[], None]) -> None:
    """Run a benchmark's body on the throw-away database, then drop it."""
    logging.getLogger("celery").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message="No directory at")
    setup()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    from django.db import connection

    print(f"database: {connection.vendor}")
    try:
        body()
    finally:
        if ORIGINAL_DB_NAME is not None:
            connection.creation.destroy_test_db(ORIGINAL_DB_NAME, verbosity=0)


def main() -> None:
    print("series endpoint:")
    bench_series()
    print("fleet overview:")
    bench_overview()
    print("polling:")
    bench_polling()


if __name__ == "__main__":
    run(main)
