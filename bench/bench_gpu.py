"""GPU monitoring benchmarks (figures for issue 16; no assertions).

1. One worker process polls 200 simulated dcgm-exporters of 8 GPUs each (the poll_target task,
   serially as a solo worker, then with 8 threads): seconds per round against a 15 s interval,
   CPU per poll. The simulators run in four processes of their own.
2. A real Celery worker (`celery worker --beat --concurrency 4`, as deployed) polls the same
   targets on its own schedule for a few rounds, through Redis on loopback (REDIS_URL, database
   13): polls finished against polls due, the polls missed (the targets' own accounting), and
   the gaps between a target's consecutive polls (15 s when none fell behind). It stops by
   itself after BENCH_CELERY_S seconds (default 100; more than its 35 s warm-up and 2 s end
   margin, or the bench refuses to start).
3. The Machines view for 200 machines of 8 GPUs (page and refreshed grid): median and p95 ms,
   and the CPU one request costs (this process, plus its PostgreSQL backend's): on a busy
   machine the wall time is mostly waiting for a core, the CPU time is not.

Runs on a throw-away database like bench_monitoring.py (SQLite by default, PostgreSQL when
DATABASE_URL points to one).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_monitoring import (
    p95_ms,
    run,
    shares,
    start_simulators,
    stop_simulators,
    timed_poll_rounds,
    viewer_client,
)

MACHINES = 200
GPUS = 8
INTERVAL_S = 15


def _start_gpu_simulators(count: int, processes: int) -> tuple[list[subprocess.Popen], list[dict]]:
    """Start `processes` simulators serving `count` 8-GPU dcgm-exporters with distinct hosts."""
    sims, served = start_simulators(
        [
            ["--vllm", "0", "--gpu-machines", str(n), "--gpu-offset", str(1000 + first)]
            for first, n in shares(count, processes)
        ]
    )
    return sims, [t for ts in served for t in ts]


def _backend_cpu_s() -> float:
    """CPU seconds of this connection's PostgreSQL backend (0 on SQLite: it runs in-process)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        with open(f"/proc/{pid}/stat") as stat:  # the server runs on this machine (loopback)
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_ms_per_call(fn, rounds: int = 10) -> tuple[float, float]:
    """Return (this process, its PostgreSQL backend) CPU ms per call of `fn`."""
    fn()
    process, backend = time.process_time(), _backend_cpu_s()
    for _ in range(rounds):
        fn()
    return (
        1000 * (time.process_time() - process) / rounds,
        1000 * (_backend_cpu_s() - backend) / rounds,
    )


def _serial_round_cpu(ids: list[int]) -> tuple[float, float, float]:
    """Poll every target once, serially: (wall s, worker CPU s, PostgreSQL backend CPU s)."""
    from monitoring.tasks import poll_target

    time.sleep(1.0)
    started, process, backend = time.perf_counter(), time.process_time(), _backend_cpu_s()
    for target_id in ids:
        poll_target.apply(kwargs={"target_id": target_id})
    return (
        time.perf_counter() - started,
        time.process_time() - process,
        _backend_cpu_s() - backend,
    )


# The Celery round measures from the end of its warm-up (the worker starting, new targets
# finding their first slot: 20 s and one interval) to a little before it stops the worker.
CELERY_WARM_UP_S = 20 + INTERVAL_S
CELERY_END_MARGIN_S = 2


def celery_run_s(text: str) -> float:
    """Return BENCH_CELERY_S in seconds; refuse (naming it) a run that leaves nothing to
    measure after the warm-up, which printed a negative window and a meaningless share."""
    try:
        run_s = float(text)
    except ValueError:
        raise SystemExit(f"BENCH_CELERY_S={text!r} is not a number of seconds") from None
    shortest = CELERY_WARM_UP_S + CELERY_END_MARGIN_S
    if not run_s > shortest:  # also refuses nan
        raise SystemExit(
            f"BENCH_CELERY_S={text} is too short: the Celery round's first {CELERY_WARM_UP_S} s"
            f" are its warm-up and its last {CELERY_END_MARGIN_S} s are not measured; give it"
            f" more than {shortest} s (default 100)"
        )
    return run_s


CELERY_S = celery_run_s(os.environ.get("BENCH_CELERY_S", "100"))
ROOT = Path(__file__).resolve().parents[1]


def _loopback_redis(url: str, db: int) -> str:
    """Return REDIS_URL on database `db`, refusing anything but loopback (the bench's rule)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme != "redis" or parts.hostname not in {"127.0.0.1", "localhost", "::1"}:
        raise SystemExit(f"REDIS_URL must be a loopback redis:// URL, not {url!r}")
    return parts._replace(path=f"/{db}").geturl()


def _database_url() -> str:
    from django.db import connection

    s = connection.settings_dict
    if connection.vendor != "postgresql" or s["HOST"] not in {"127.0.0.1", "localhost", "::1"}:
        raise SystemExit("the Celery round needs PostgreSQL on loopback (DATABASE_URL)")
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST']}:{s['PORT'] or 5432}/{s['NAME']}"


def _celery_rounds(ids: list[int], run_s: float = CELERY_S) -> None:
    """Let a real worker with beat poll `ids` for `run_s` seconds; print what it kept up with."""
    from django.db import connection

    from core.models import OpsCounter
    from monitoring.models import Sample, Target
    from monitoring.pacing import MISSED_TOLERANCE

    redis = os.environ.get("REDIS_URL", "")
    if not redis:
        print("  Celery round skipped: no REDIS_URL")
        return
    Target.objects.filter(pk__in=ids).update(next_poll_at=None, missed_polls=0)
    OpsCounter.objects.filter(name="serveplan_polls_missed").delete()
    tmp = Path(tempfile.mkdtemp(prefix="serveplan-bench-celery-"))
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=_database_url(),
        REDIS_URL=_loopback_redis(redis, 13),
        SERVEPLAN_VAR_DIR=str(tmp),
        SECRET_KEY=os.environ.get("SECRET_KEY", "bench-secret"),
        DEBUG="false",
    )
    subprocess.run(  # a queue left by an earlier run would skew the figures
        [sys.executable, "-m", "celery", "-A", "config", "purge", "-f"],
        cwd=ROOT, env=env, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    connection.close()  # the worker writes; this process only reads afterwards
    load_before = os.getloadavg()[0]
    started = time.time()
    from tests.monitoring.integration.worker import celery_worker

    with celery_worker(env, tmp, concurrency=4):  # beat inside, as deployed
        time.sleep(run_s)
    load_after = os.getloadavg()[0]
    # The first interval is the warm-up (the worker starting, new targets finding their slot).
    window_from = started + CELERY_WARM_UP_S
    window_to = started + run_s - CELERY_END_MARGIN_S
    polls: dict[int, list[float]] = {}
    for target_id, ts in (
        Sample.objects.filter(target_id__in=ids, series="poll.up")
        .values_list("target_id", "ts")
        .order_by("target_id", "ts")
    ):
        polls.setdefault(target_id, []).append(ts.timestamp())
    if not polls:  # a kind without a poll.up sample: any one series per poll
        for target_id, ts in (
            Sample.objects.filter(target_id__in=ids).values_list("target_id", "ts").distinct()
        ):
            polls.setdefault(target_id, []).append(ts.timestamp())
    gaps, finished = [], 0
    for times in polls.values():
        times = sorted(set(times))
        inside = [t for t in times if window_from <= t <= window_to]
        finished += len(inside)
        gaps += [b - a for a, b in zip(times, times[1:], strict=False) if b >= window_from]
    due = len(ids) * (window_to - window_from) / INTERVAL_S
    missed = sum(Target.objects.filter(pk__in=ids).values_list("missed_polls", flat=True))
    late = sum(1 for g in gaps if g > INTERVAL_S * MISSED_TOLERANCE)
    gaps.sort()
    p95_gap = gaps[int(0.95 * (len(gaps) - 1))] if gaps else float("nan")
    print(
        f"  real Celery worker (concurrency 4, beat inside), {len(ids)} targets at {INTERVAL_S} s"
        f" for {run_s:.0f} s: {finished} polls finished in the measured"
        f" {window_to - window_from:.0f}"
        f" s of {due:.0f} due ({finished / due:.0%}); gaps between a target's polls p95"
        f" {p95_gap:.1f} s, max {gaps[-1] if gaps else float('nan'):.1f} s; {late} gaps over"
        f" {MISSED_TOLERANCE} intervals; polls missed (targets' accounting, whole run) {missed};"
        f" load average {load_before:.1f} -> {load_after:.1f}"
    )


def _machines(hostnames: list[str]) -> None:
    from inventory.models import GpuType, Machine, Pool

    gpu_type, _ = GpuType.objects.get_or_create(
        slug="bench-h100",
        defaults={
            "name": "H100 80GB (bench)",
            "memory_gib": 80,
            "hbm_bandwidth_gbs": 3350,
            "bf16_dense_tflops": 989,
            "form_factor": "sxm",
        },
    )
    pool, _ = Pool.objects.get_or_create(name="bench")
    Machine.objects.bulk_create(
        [
            Machine(hostname=h, gpu_type=gpu_type, gpu_count=GPUS, pool=pool, cpu_cores=64)
            for h in hostnames
        ],
        ignore_conflicts=True,
    )


def bench_polling_and_view(count: int = MACHINES, processes: int = 4) -> None:
    from monitoring.services import target_create

    sims, targets = _start_gpu_simulators(count, processes)
    try:
        _machines([t["name"] for t in targets])
        ids = [
            target_create(
                name=f"gpu-{t['name']}",
                kind="gpu",
                base_url=t["base_url"],
                poll_interval_s=INTERVAL_S,
            ).pk
            for t in targets
        ]
        if os.environ.get("BENCH_CELERY_ONLY"):
            _celery_rounds(ids)
            return
        for r in timed_poll_rounds(ids, INTERVAL_S):
            print(
                f"  one worker process, {r.label}, {len(ids)} GPU targets x {GPUS} GPUs: "
                f"{r.wall_s:.1f} s per round ({r.verdict} a {INTERVAL_S} s interval), "
                f"{len(ids) / r.wall_s:.0f} polls/s, {r.stored / len(ids):.0f} samples per poll, "
                f"CPU {1000 * r.cpu_s / len(ids):.1f} ms per poll, {r.up}/{len(ids)} targets up"
            )
        wall, cpu, backend = _serial_round_cpu(ids)
        print(
            f"  one more serial round: {wall:.1f} s wall; CPU per poll "
            f"{1000 * cpu / len(ids):.1f} ms in the worker + "
            f"{1000 * backend / len(ids):.1f} ms in its PostgreSQL backend "
            f"(busy machine: CPU per poll x {len(ids)} = {cpu + backend:.1f} s of the "
            f"{INTERVAL_S} s interval)"
        )
        _celery_rounds(ids)
        client = viewer_client()
        for url in ("/monitoring/machines/", "/monitoring/machines/grid/"):
            median, p95 = p95_ms(lambda url=url: client.get(url))
            cpu, backend = _cpu_ms_per_call(lambda url=url: client.get(url))
            print(
                f"  Machines view, {count} machines x {GPUS} GPUs, {url}: "
                f"median {median:.0f} ms, p95 {p95:.0f} ms (target: p95 <= 300 ms); "
                f"CPU per request {cpu:.0f} ms + {backend:.0f} ms in PostgreSQL"
            )
    finally:
        stop_simulators(sims)


if __name__ == "__main__":
    run(bench_polling_and_view)
