"""Dashboard reads from a time-series server holding a team's fleet (issue 19; figures, no
assertions): BENCH_TARGETS targets (default 200; the issue also asks for 2,000) x BENCH_HOURS
(default 24) hours at a 15 s interval, in a real Prometheus and a real VictoriaMetrics.

Filling a server through remote write would take this machine most of an hour (about 20 k
samples/s from one Python process: bench_series_store.py measures that), so the history goes in
the servers' own bulk ways, with the same series names and labels remote write gives them
(monitoring.series.remote_write): `promtool tsdb create-blocks-from openmetrics` for Prometheus,
`/api/v1/import/prometheus` for VictoriaMetrics. Each target has the overview's three fleet keys;
the first one also has the vLLM page's series. Then the reads go through the store the
dashboards use (monitoring.stores.prometheus):

- the vLLM page of one target (its series over 1 h, 6 h and 24 h, at most 1,000 points each);
- the overview's fleet sums of three keys over every target (1 h, 6 h, 24 h): the fleet series
  the scheduler's tick writes (loaded as their sums), and, for comparison, the same sums over
  the targets' own series (what a subset of the targets costs).

Compare with the embedded store on PostgreSQL at the same fleet size (bench_series_store.py,
bench_load.py). The machine is shared: read the ratios between windows and servers first.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from bench_monitoring import p95_ms, run

TARGETS = int(os.environ.get("BENCH_TARGETS", "200"))
HOURS = float(os.environ.get("BENCH_HOURS", "24"))
INTERVAL_S = 15
FLEET_KEYS = ("vllm.requests_running", "vllm.generation_tokens_per_s", "vllm.prompt_tokens_per_s")
WINDOWS_H = (1, 6, 24)


def _page_keys() -> list[str]:
    from monitoring.charts import vllm_charts

    return sorted({key for chart in vllm_charts() for key in chart.series})


def _series(refs, page_keys) -> Iterator[tuple[str, str, object]]:
    """(metric name, label text, target ref) of every series the load holds."""
    from monitoring.series import remote_write as rw
    from monitoring.series.promql import quote

    for n, ref in enumerate([rw.FLEET, *refs]):
        labels = ",".join(
            f"{name}={quote(value)}"
            for name, value in sorted(
                [("instance", ref.name), ("job", rw.JOB), (rw.TARGET_LABEL, str(ref.id))]
            )
        )
        # The fleet series (the scheduler's tick writes them) and each target's fleet keys; the
        # first target has its vLLM page too.
        keys = sorted(set(FLEET_KEYS) | (set(page_keys) if n == 1 else set()))
        for key in keys:
            yield rw.metric_name(key), labels, ref


def _value(step: int, target_id: int, key_index: int) -> float:
    return float((step + target_id * 7 + key_index * 13) % 97)


class Values:
    """Each target's value at a step, and the fleet's: the sum over the targets (a table per
    key of the 97 residues, so that 2,000 targets cost nothing per step)."""

    def __init__(self, target_ids: list[int]) -> None:
        self.target_ids = target_ids
        self._sums: dict[int, list[float]] = {}

    def __call__(self, step: int, target_id: int, key_index: int) -> float:
        from monitoring.series import remote_write as rw

        if target_id != rw.FLEET.id:
            return _value(step, target_id, key_index)
        table = self._sums.get(key_index)
        if table is None:
            table = self._sums[key_index] = [
                sum(_value(r, t, key_index) for t in self.target_ids) for r in range(97)
            ]
        return table[step % 97]


def _families(series) -> list[tuple[str, list[tuple[str, int]]]]:
    """The series grouped by metric name: (name, [(label text, target id)]), sorted."""
    by_family: dict[str, list[tuple[str, int]]] = {}
    for metric, labels, ref in series:
        by_family.setdefault(metric, []).append((labels, ref.id))
    return sorted(by_family.items())


def write_openmetrics(path: Path, series, values: Values, end_s: int, steps: int) -> int:
    """Write the load as OpenMetrics text, a family at a time (promtool's input); return the
    number of samples."""
    count = 0
    with path.open("w") as out:
        for k, (metric, members) in enumerate(_families(series)):
            out.write(f"# TYPE {metric} gauge\n")
            for labels, target_id in members:
                lines = [
                    f"{metric}{{{labels}}} {values(i, target_id, k)} "
                    f"{end_s - INTERVAL_S * (steps - 1 - i)}\n"
                    for i in range(steps)
                ]
                out.writelines(lines)
                count += steps
        out.write("# EOF\n")
    return count


def import_victoria_metrics(url: str, series, values: Values, end_s: int, steps: int) -> int:
    """Send the load to /api/v1/import/prometheus (timestamps in ms), in 50,000-line bodies."""
    import httpx

    client, count, body = httpx.Client(trust_env=False, timeout=120), 0, []
    for k, (metric, members) in enumerate(_families(series)):
        for labels, target_id in members:
            for i in range(steps):
                ts_ms = (end_s - INTERVAL_S * (steps - 1 - i)) * 1000
                body.append(f"{metric}{{{labels}}} {values(i, target_id, k)} {ts_ms}\n")
            if len(body) >= 50_000:
                client.post(f"{url}/api/v1/import/prometheus", content="".join(body))
                count, body = count + len(body), []
    if body:
        client.post(f"{url}/api/v1/import/prometheus", content="".join(body))
        count += len(body)
    client.get(f"{url}/internal/force_flush")  # make every imported sample searchable now
    return count


def _points(result) -> int:
    return sum(v is not None for s in result.series for v in s.values)


def _reads(name, store, refs, page_keys, end) -> None:
    from monitoring.series import SeriesMatch

    page = [SeriesMatch(k, None) for k in page_keys]
    for hours in WINDOWS_H:
        start = end - timedelta(hours=hours)
        reads = {
            f"vLLM page, {len(page)} series": lambda s=start: store.range(
                refs[:1], page, s, end, 1000
            ),
            f"fleet sums, 3 keys x {len(refs)} targets": lambda s=start: store.fleet_sum(
                refs, list(FLEET_KEYS), s, end, 1000
            ),
            # All targets but one: summed from their own series.
            f"subset sums, 3 keys x {len(refs) - 1} targets": lambda s=start: store.fleet_sum(
                refs[1:], list(FLEET_KEYS), s, end, 1000
            ),
        }
        for what, read in reads.items():
            median, p95 = p95_ms(read)
            print(f"  {name:<16} {what}, {hours} h: median {median:.0f} ms, ", end="")
            # The points read, since an empty answer would measure nothing.
            print(f"p95 {p95:.0f} ms ({_points(read()):,} points)")


def main() -> None:
    from django.utils import timezone

    from monitoring import stores
    from monitoring.models import Target
    from monitoring.series.buffer import RetryBuffer
    from monitoring.stores.prometheus import PrometheusStore
    from tests.monitoring.tsdb import servers

    Target.objects.bulk_create(
        Target(name=f"bench-{i:04d}", kind="vllm", base_url=f"http://127.0.0.1:9/{i}")
        for i in range(TARGETS)
    )
    refs = stores.refs(Target.objects.order_by("pk"))
    page_keys = _page_keys()
    end = timezone.now().replace(microsecond=0) - timedelta(minutes=1)
    end_s, steps = int(end.timestamp()), int(HOURS * 3600 // INTERVAL_S)
    series = list(_series(refs, page_keys))
    values = Values([ref.id for ref in refs])
    print(f"load: {TARGETS} targets x {HOURS:g} h at {INTERVAL_S} s, {len(series):,} series")
    tmp = Path(tempfile.mkdtemp(prefix="serveplan-bench-tsdb-scale-"))
    running = []
    try:
        if servers.binary("prometheus") and servers.binary("promtool"):
            workdir = tmp / "prometheus"
            workdir.mkdir()
            started = time.perf_counter()
            count = write_openmetrics(tmp / "load.om", series, values, end_s, steps)
            written = time.perf_counter() - started
            subprocess.run(
                [
                    "promtool",
                    "tsdb",
                    "create-blocks-from",
                    "openmetrics",
                    str(tmp / "load.om"),
                    str(workdir / "data"),
                ],
                check=True,
                capture_output=True,
            )
            (tmp / "load.om").unlink()
            print(f"  prometheus       {count:,} samples: text {written:.0f} s, ", end="")
            print(f"promtool blocks {time.perf_counter() - started - written:.0f} s")
            server = servers.start_prometheus(workdir)
            running.append(server)
            store = PrometheusStore(
                query_url=server.url, write_url=server.write_url, buffer=RetryBuffer(max_samples=1)
            )
            _reads("prometheus", store, refs, page_keys, end)
            server.stop()
            running.remove(server)
        else:
            print("  prometheus: not installed, skipped")
        if servers.binary("victoria-metrics"):
            server = servers.start_victoria_metrics(tmp / "victoria-metrics")
            running.append(server)
            started = time.perf_counter()
            count = import_victoria_metrics(server.url, series, values, end_s, steps)
            print(f"  victoria-metrics {count:,} samples imported in ", end="")
            print(f"{time.perf_counter() - started:.0f} s")
            store = PrometheusStore(
                query_url=server.url, write_url=server.write_url, buffer=RetryBuffer(max_samples=1)
            )
            _reads("victoria-metrics", store, refs, page_keys, end)
        else:
            print("  victoria-metrics: not installed, skipped")
    finally:
        for server in running:
            server.stop()


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    run(main)
