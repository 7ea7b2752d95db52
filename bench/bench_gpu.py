"""GPU monitoring benchmarks (figures for issue 16; no assertions).

1. One worker process polls 200 simulated dcgm-exporters of 8 GPUs each (the poll_target task,
   serially as a solo worker, then with 8 threads): seconds per round against a 15 s interval,
   CPU per poll. The simulators run in four processes of their own.
2. The Machines view for 200 machines of 8 GPUs (page and refreshed grid): median and p95 ms.

Runs on a throw-away database like bench_monitoring.py (SQLite by default, PostgreSQL when
DATABASE_URL points to one).
"""

from __future__ import annotations

import json
import logging
import os
import resource
import subprocess
import sys
import time
import warnings

import bench_monitoring as base
from bench_monitoring import ROOT, _poll_round, p95_ms, setup, viewer_client

MACHINES = 200
GPUS = 8
INTERVAL_S = 15


def _start_gpu_simulators(count: int, processes: int) -> tuple[list[subprocess.Popen], list[dict]]:
    """Start `processes` simulators serving `count` 8-GPU dcgm-exporters with distinct hosts."""
    sims, targets = [], []
    per = -(-count // processes)
    for n in range(processes):
        sim = subprocess.Popen(
            [
                sys.executable, "-m", "monitoring.simulator", "--port", "0", "--vllm", "0",
                "--no-ray", "--no-faults", "--gpu-machines", str(min(per, count - n * per)),
                "--gpu-offset", str(1000 + n * per),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        sims.append(sim)
    for sim in sims:
        targets.extend(json.loads(sim.stdout.readline()))
    return sims, targets


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
    from monitoring.models import Sample, Target
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
        _poll_round(ids, 1)
        for threads, label in ((1, "solo pool (serial)"), (8, "threads pool, 8 threads")):
            time.sleep(1.0)
            before = Sample.objects.count()
            cpu0 = resource.getrusage(resource.RUSAGE_SELF)
            started = time.perf_counter()
            _poll_round(ids, threads)
            wall = time.perf_counter() - started
            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
            cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
            stored = Sample.objects.count() - before
            ok = Target.objects.filter(pk__in=ids, last_status="ok").count()
            verdict = "keeps up with" if wall < INTERVAL_S else "FALLS BEHIND"
            print(
                f"  one worker process, {label}, {len(ids)} GPU targets x {GPUS} GPUs: "
                f"{wall:.1f} s per round ({verdict} a {INTERVAL_S} s interval), "
                f"{len(ids) / wall:.0f} polls/s, {stored / len(ids):.0f} samples per poll, "
                f"CPU {1000 * cpu / len(ids):.1f} ms per poll, {ok}/{len(ids)} targets up"
            )
        client = viewer_client()
        for url in ("/monitoring/machines/", "/monitoring/machines/grid/"):
            median, p95 = p95_ms(lambda url=url: client.get(url))
            print(
                f"  Machines view, {count} machines x {GPUS} GPUs, {url}: "
                f"median {median:.0f} ms, p95 {p95:.0f} ms (target: p95 <= 300 ms)"
            )
    finally:
        for sim in sims:
            sim.terminate()
            sim.wait(timeout=30)


def main() -> None:
    logging.getLogger("celery").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message="No directory at")
    setup()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    from django.db import connection

    print(f"database: {connection.vendor}")
    try:
        bench_polling_and_view()
    finally:
        if base.ORIGINAL_DB_NAME is not None:
            connection.creation.destroy_test_db(base.ORIGINAL_DB_NAME, verbosity=0)


if __name__ == "__main__":
    main()
