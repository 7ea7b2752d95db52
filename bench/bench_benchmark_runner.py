"""The load generator's own cost: the request rate it sustains on one core while streaming.

Target (issue 28): >= 300 requests/s at 64 in flight against the simulator, and its CPU per
1,000 requests; polls keep their schedule during the benchmark (measured in the same run).

Three processes on loopback:
- the simulator (`python -m monitoring.simulator`) with its token timings scaled down
  (--time-scale), so the server answers faster than the runner can send and the runner's own
  limit shows; pinned to the other core when there are two;
- this process runs the benchmark (benchmarks.loadgen, what the Celery task runs), pinned to
  one core; its CPU time over the run gives the CPU per 1,000 requests;
- a poller process scrapes a second simulated server's /metrics every second with the poller's
  own code (monitoring.scrape.scrape_once) and reports how late each poll started.

Run: .venv/bin/python bench/bench_benchmark_runner.py [--requests 6000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.loadgen import Endpoint, Workload, run_benchmark  # noqa: E402

POLLER = """
import json, sys, time
from monitoring.scrape import scrape_once
url, seconds, interval = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
start = time.monotonic()
late, durations, failed = [], [], 0
k = 0
while time.monotonic() - start < seconds:
    due = start + k * interval
    now = time.monotonic()
    if now < due:
        time.sleep(due - now)
    began = time.monotonic()
    late.append(began - due)
    result = scrape_once(url, "vllm")
    failed += not result.ok
    durations.append(time.monotonic() - began)
    k += 1
print(json.dumps({"polls": k, "late_s": late, "durations_s": durations, "failed": failed}))
"""


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _pin(pid: int, core: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(pid, {core})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--input-tokens", type=int, default=32)
    parser.add_argument("--output-tokens", type=int, default=8)
    parser.add_argument("--time-scale", type=float, default=0.05)
    args = parser.parse_args()

    sim = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "monitoring.simulator",
            "--port",
            "0",
            "--vllm",
            "2",
            "--no-ray",
            "--gpu-machines",
            "0",
            "--no-faults",
            "--time-scale",
            str(args.time_scale),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        targets = json.loads(sim.stdout.readline())
        bench_url, poll_url = targets[0]["base_url"], targets[1]["base_url"]
        _pin(sim.pid, 1)
        _pin(0, 0)
        workload = Workload(
            requests=args.requests,
            input_tokens=args.input_tokens,
            output_tokens=args.output_tokens,
            concurrency=args.concurrency,
        )
        # Warm-up: connections, the serving model's cache, the prompt words.
        asyncio.run(
            run_benchmark(
                Endpoint(base_url=bench_url),
                [
                    Workload(
                        requests=200,
                        input_tokens=args.input_tokens,
                        output_tokens=args.output_tokens,
                        concurrency=args.concurrency,
                    )
                ],
            )
        )
        expected_s = max(10.0, args.requests / 300)
        poller = subprocess.Popen(
            [sys.executable, "-c", POLLER, poll_url, str(expected_s), "1.0"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        cpu0, wall0 = _cpu_s(), time.perf_counter()
        result = asyncio.run(run_benchmark(Endpoint(base_url=bench_url), [workload]))
        cpu, wall = _cpu_s() - cpu0, time.perf_counter() - wall0
        polls = json.loads(poller.communicate(timeout=expected_s + 60)[0])
    finally:
        sim.terminate()
        sim.wait(timeout=30)

    s = result.levels[0].summary
    late_ms = sorted(x * 1000 for x in polls["late_s"])
    print(
        f"requests: {s.completed} completed, {s.failed} failed, {s.not_sent} not sent, "
        f"{args.concurrency} in flight, {args.input_tokens} in / {args.output_tokens} out tokens"
    )
    print(
        f"sustained: {s.request_throughput_rps:.0f} requests/s, "
        f"{s.output_throughput_tok_s:.0f} streamed tokens/s over {s.duration_s:.1f} s "
        f"(target >= 300 requests/s)"
    )
    print(
        f"runner CPU: {cpu:.2f} s for {s.sent} requests = {1000 * cpu / max(s.sent, 1):.2f} "
        f"CPU-s per 1,000 requests ({100 * cpu / wall:.0f} % of one core); "
        f"at 100 % of one core: {s.sent / cpu:.0f} requests/s"
    )
    print(
        f"server timings seen: TTFT median {s.ttft.median_ms:.1f} ms, "
        f"TPOT median {s.tpot.median_ms:.2f} ms"
    )
    print(
        f"polls during the run: {polls['polls']} every 1 s, {polls['failed']} failed; "
        f"start lateness median {statistics.median(late_ms):.1f} ms, max {late_ms[-1]:.1f} ms; "
        f"poll duration median {1000 * statistics.median(polls['durations_s']):.1f} ms"
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load} (the sustained rate needs both "
          "processes on a core each; the CPU per 1,000 requests does not)")  # fmt: skip
    return 0 if s.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
