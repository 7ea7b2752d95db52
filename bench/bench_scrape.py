"""Scrape benchmarks: parse+extract of a 700 KB Ray exporter payload, and polling throughput.

Targets (issue 7): a 700 KB Ray exporter payload parsed and extracted in <= 50 ms; one worker
process polls 500 simulated vLLM targets at a 15 s interval (>= 33.3 polls/s) without falling
behind. The simulator runs in its own process on 127.0.0.1; the poll loop is bounded (3 rounds).
Run: .venv/bin/python bench/bench_scrape.py [--targets 500] [--threads 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from monitoring.scrape import FetchPolicy, from_text, scrape_once  # noqa: E402
from monitoring.scrape import ray as ray_extract  # noqa: E402

FIXTURES = ROOT / "tests" / "monitoring" / "fixtures"
WORKER = re.compile(r'WorkerId="[^"]*"')  # bench data building only, not parsing


def big_ray_payload(min_bytes: int = 700 * 1024) -> str:
    """Grow the recorded Ray 2.60 head payload with more workers until it is min_bytes.

    Every sample line with a WorkerId gets copies for extra workers (inside its own family
    block, as a busier node would expose them) until the payload reaches the size.
    """
    lines = (FIXTURES / "ray" / "head_exporter_metrics_1.txt").read_text().splitlines()
    size = sum(len(line) + 1 for line in lines)
    copies = 0
    while True:
        copies += 1
        out: list[str] = []
        grown = size
        for line in lines:
            out.append(line)
            if grown < min_bytes and not line.startswith("#") and "WorkerId=" in line:
                for n in range(copies):
                    extra = WORKER.sub(f'WorkerId="bench{n:04d}{"0" * 48}"', line)
                    out.append(extra)
                    grown += len(extra) + 1
        if grown >= min_bytes:
            return "\n".join(out) + "\n"


def median_ms(fn, runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def bench_parse() -> None:
    text = big_ray_payload()
    size_kb = len(text.encode()) / 1024
    ms = median_ms(lambda: ray_extract.extract(text, 0.0, node="bench:8080"), runs=30)
    full = median_ms(lambda: from_text(text, "ray", ts=0.0, instance="bench:8080"), runs=30)
    print(f"ray exporter payload {size_kb:.0f} KB: parse+extract median {ms:.1f} ms "
          f"(from_text incl. merge {full:.1f} ms; target <= 50 ms)")  # fmt: skip
    vllm_text = (FIXTURES / "vllm" / "v0_32_metrics_after.txt").read_text()
    ms = median_ms(lambda: from_text(vllm_text, "vllm", ts=0.0), runs=100)
    print(f"vllm 0.32 payload {len(vllm_text) / 1024:.0f} KB: parse+extract median {ms:.2f} ms")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_poll(n_targets: int, threads: int, rounds: int) -> None:
    sim = subprocess.Popen(
        [sys.executable, "-m", "monitoring.simulator", "--port", "0", "--vllm", str(n_targets),
         "--no-ray", "--no-faults", "--gpu-machines", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert sim.stdout is not None
        targets = json.loads(sim.stdout.readline())
        base = targets[0]["base_url"].split("/vllm/")[0]
        urllib.request.urlopen(base + "/", timeout=10).read()  # noqa: S310 - loopback
        policy = FetchPolicy(connect_timeout_s=2, total_timeout_s=10)
        limits = httpx.Limits(max_connections=threads, max_keepalive_connections=threads)
        previous: dict[str, object] = {}
        with httpx.Client(limits=limits, follow_redirects=False, trust_env=False) as client:

            def poll(target: dict[str, str]):
                return target["name"], scrape_once(
                    target["base_url"], "vllm", previous.get(target["name"]),
                    policy=policy, client=client,
                )  # fmt: skip

            cpu_before, sim_before = time.process_time(), cpu_seconds(sim.pid)
            started = time.perf_counter()
            polls = samples = failures = 0
            with ThreadPoolExecutor(max_workers=threads) as pool:
                for _ in range(rounds):
                    for name, result in pool.map(poll, targets):
                        polls += 1
                        samples += len(result.samples)
                        failures += not result.ok
                        if result.raw is not None:
                            previous[name] = result.raw
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu_before
            sim_cpu = cpu_seconds(sim.pid) - sim_before
        needed = n_targets / 15
        print(f"polling {n_targets} simulated vLLM targets x {rounds} rounds, {threads} threads: "
              f"{polls / wall:.0f} polls/s, {samples / wall:.0f} samples/s, {failures} failed; "
              f"poller CPU {100 * cpu / wall:.0f} %, simulator CPU {100 * sim_cpu / wall:.0f} % "
              f"(one core = 100 %); needed at 15 s: {needed:.1f} polls/s -> "
              f"{polls / wall / needed:.1f}x headroom")  # fmt: skip
    finally:
        sim.terminate()
        sim.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", type=int, default=500)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    bench_parse()
    bench_poll(args.targets, args.threads, args.rounds)


if __name__ == "__main__":
    main()
