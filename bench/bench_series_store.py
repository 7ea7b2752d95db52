"""Series stores side by side (issue 19; figures, no assertions).

The same load goes to the embedded store (this database), a real Prometheus and a real
VictoriaMetrics (Debian packages, started here on free loopback ports with temporary data
directories), then the same reads go through each:

1. Remote write throughput of one worker (samples/s): one request per poll, as the poller sends
   them (45 samples), and in 5,000-sample requests, as `copy_samples_to_prometheus` sends them.
2. Dashboard reads, median and p95 ms: a vLLM page's 17 series of one target over 1 h (the
   series API), and the fleet sums of 3 keys over every target (the overview's fleet-series).

BENCH_TARGETS (default 20) targets x BENCH_HOURS (default 1) hours at a 15 s interval; the
database is SQLite unless DATABASE_URL points to PostgreSQL (see bench_monitoring.setup). The
machine is shared: compare the stores by their ratio, not by the absolute numbers.
"""

from __future__ import annotations

import os
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from bench_monitoring import p95_ms, run

TARGETS = int(os.environ.get("BENCH_TARGETS", "20"))
HOURS = float(os.environ.get("BENCH_HOURS", "1"))
INTERVAL_S = 15
SERIES_PER_POLL = 45


def _keys() -> tuple[list[str], list[str]]:
    from monitoring.charts import vllm_charts

    page = sorted({key for chart in vllm_charts() for key in chart.series})
    return page, page + [f"vllm.other_{i}" for i in range(SERIES_PER_POLL - len(page))]


def _polls(refs, keys, end):
    """Every poll of every target over the window, oldest first (a WriteBatch each)."""
    from monitoring.series import WriteBatch, WriteSample

    steps = int(HOURS * 3600 // INTERVAL_S)
    for i in range(steps):
        ts = end - timedelta(seconds=INTERVAL_S * (steps - 1 - i))
        for n, ref in enumerate(refs):
            samples = tuple(WriteSample(k, (), float((i + n + j) % 97)) for j, k in enumerate(keys))
            yield WriteBatch(target=ref, ts=ts, samples=samples)


def _load_embedded(batches) -> float:
    from django.db import transaction

    from monitoring.stores.embedded import EmbeddedStore

    store, started, count = EmbeddedStore(), time.perf_counter(), 0
    with transaction.atomic():
        for batch in batches:
            store.write(batch)
            count += len(batch)
    return count / (time.perf_counter() - started)


def _load_remote(store, batches, request_samples: int) -> float:
    chunk, size, count = [], 0, 0
    started = time.perf_counter()
    for batch in batches:
        chunk.append(batch)
        size += len(batch)
        if size >= request_samples:
            store.send(chunk)
            count += size
            chunk, size = [], 0
    if chunk:
        store.send(chunk)
        count += size
    return count / (time.perf_counter() - started)


def _reads(name, store, refs, page_keys, end) -> dict[str, tuple[float, float]]:
    from monitoring.series import SeriesMatch

    start = end - timedelta(hours=1)
    page = [SeriesMatch(k, None) for k in page_keys]
    fleet = ["vllm.requests_running", "vllm.generation_tokens_per_s", "vllm.prompt_tokens_per_s"]
    out = {
        "vLLM page, 17 series, 1 h": p95_ms(lambda: store.range(refs[:1], page, start, end, 1000)),
        f"fleet sums, 3 keys x {len(refs)} targets, 1 h": p95_ms(
            lambda: store.fleet_sum(refs, fleet, start, end, 1000)
        ),
    }
    for what, (median, p95) in out.items():
        print(f"  {name:<16} {what}: median {median:.0f} ms, p95 {p95:.0f} ms")
    return out


def main() -> None:
    from django.utils import timezone

    from monitoring import stores
    from monitoring.models import Target
    from monitoring.series.buffer import RetryBuffer
    from monitoring.stores.embedded import EmbeddedStore
    from monitoring.stores.prometheus import PrometheusStore
    from tests.monitoring.tsdb import servers

    Target.objects.bulk_create(
        Target(name=f"bench-{i:04d}", kind="vllm", base_url=f"http://127.0.0.1:9/{i}")
        for i in range(TARGETS)
    )
    refs = stores.refs(Target.objects.order_by("pk"))
    page_keys, keys = _keys()
    end = timezone.now().replace(microsecond=0)
    samples = TARGETS * int(HOURS * 3600 // INTERVAL_S) * len(keys)
    print(f"load: {TARGETS} targets x {HOURS:g} h at {INTERVAL_S} s x {len(keys)} series")
    print(f"      = {samples:,} samples")
    rate = _load_embedded(_polls(refs, keys, end))
    print(f"  embedded         write: {rate:,.0f} samples/s (bulk insert, one transaction)")
    backends = {"embedded": EmbeddedStore()}
    running = []
    tmp = Path(tempfile.mkdtemp(prefix="serveplan-bench-tsdb-"))
    for name, start in (
        ("prometheus", servers.start_prometheus),
        ("victoria-metrics", servers.start_victoria_metrics),
    ):
        if servers.binary(name) is None:
            print(f"  {name}: not installed, skipped")
            continue
        server = start(tmp / name)
        running.append(server)
        store = PrometheusStore(
            query_url=server.url, write_url=server.write_url, buffer=RetryBuffer(max_samples=1)
        )
        # One request per poll, as a poller sends them: the last 200 polls of the load.
        recent = list(_polls(refs, keys, end))
        per_poll = _load_remote(store, recent[-200:], 1)
        bulk = _load_remote(store, recent[:-200], 5000)
        print(f"  {name:<16} write: {per_poll:,.0f} samples/s one request per poll, ", end="")
        print(f"{bulk:,.0f} samples/s in 5,000-sample requests (one worker)")
        backends[name] = store
    time.sleep(2)  # VictoriaMetrics makes new samples searchable within ~1 s
    try:
        results = {name: _reads(name, s, refs, page_keys, end) for name, s in backends.items()}
    finally:
        for server in running:
            server.stop()
    base = results["embedded"]
    for name, figures in results.items():
        if name != "embedded":
            ratios = ", ".join(
                f"{what.split(',')[0]} p95 x{figures[what][1] / max(base[what][1], 0.1):.2f}"
                for what in figures
            )
            print(f"  {name} against embedded: {ratios}")


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    run(main)
