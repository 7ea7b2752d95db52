"""GPU monitoring benchmarks (figures for issue 16; no assertions).

1. One worker process polls 200 simulated dcgm-exporters of 8 GPUs each (the poll_target task,
   serially as a solo worker, then with 8 threads): seconds per round against a 15 s interval,
   CPU per poll. The simulators run in four processes of their own.
2. The Machines view for 200 machines of 8 GPUs (page and refreshed grid): median and p95 ms,
   and the CPU one request costs (this process, plus its PostgreSQL backend's): on a busy
   machine the wall time is mostly waiting for a core, the CPU time is not.

Runs on a throw-away database like bench_monitoring.py (SQLite by default, PostgreSQL when
DATABASE_URL points to one).
"""

from __future__ import annotations

import os
import subprocess
import time

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
