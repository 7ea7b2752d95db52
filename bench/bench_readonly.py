"""Read-only targets against polled ones (issue 19; figures, no assertions): the simulator's
vLLM server, Ray cluster and dcgm-exporter, scraped every second by a real Prometheus, each
registered twice (a base URL, polled; a selector, read from Prometheus). For each kind: the
median time of one poll (the poll_target task), the size of the read-only query, and the median
time of the kind's page charts over 1 h (at most 500 points) through the store the dashboards use.

The machine is shared: read the ratios (read-only / polled) first.
"""

from __future__ import annotations

import os
import tempfile
import time
from datetime import timedelta
from functools import partial
from pathlib import Path

from bench_monitoring import p95_ms, run

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "20"))


def _median_ms(body) -> float:
    return p95_ms(body, ROUNDS)[0]


def _charts(target, keys: list[str], end) -> None:
    """Read a page's chart series over the last hour, as the series API does."""
    from monitoring import stores
    from monitoring.series import SeriesMatch

    matches = []
    for sid in keys:
        key = sid.split("{")[0]
        matches.append(SeriesMatch(key, sid[len(key) :] or None))
    ref = stores.ref(type(target).objects.get(pk=target.pk))
    stores.current().range([ref], matches, end - timedelta(hours=1), end, 500)


def main() -> None:
    import httpx
    from django.conf import settings
    from django.utils import timezone

    from monitoring import stores
    from monitoring.series.promql import parse_selector
    from monitoring.series.readonly.kinds import expression, of_kind
    from monitoring.services import allowed_job_create, target_create
    from monitoring.simulator import Simulator
    from monitoring.targets import kinds
    from monitoring.tasks import poll_target
    from tests.monitoring.tsdb import servers

    sim = Simulator(port=0, vllm_count=1, ray=True, gpu_machines=1, faults=False)
    sim.start()
    by_kind = {t.kind: t for t in sim.targets()}
    sd = httpx.get(f"{by_kind['ray'].base_url}/api/prometheus/sd").json()
    scrape, selectors = [], {}
    for kind in ("vllm", "gpu"):
        address, path = by_kind[kind].base_url.removeprefix("http://").split("/", 1)
        scrape.append((f"{kind}-sim", address, f"/{path}/metrics"))
        selectors[kind] = f'{{job="{kind}-sim",instance="{address}"}}'
    scrape += [("ray-sim", t, "/metrics") for group in sd for t in group["targets"]]
    selectors["ray"] = '{job="ray-sim"}'
    for job in ("vllm-sim", "ray-sim", "gpu-sim"):  # read-only targets read allowed jobs only
        allowed_job_create(name=job, note="bench")
    server = servers.start_prometheus(
        Path(tempfile.mkdtemp(prefix="bench-readonly-")), scrape=scrape
    )
    try:
        settings.MONITORING_PROMETHEUS_URL = server.url
        stores.reset()
        time.sleep(20)  # rates and quantiles need a few scrapes
        print(f"{'kind':5} {'poll polled':>12} {'read-only':>10} {'ratio':>6} {'query':>9} "
              f"{'charts 1h polled':>17} {'read-only':>10} {'ratio':>6}")  # fmt: skip
        for kind in ("vllm", "ray", "gpu"):
            polled = target_create(
                name=f"polled-{kind}", kind=kind, base_url=by_kind[kind].base_url
            )
            read = target_create(
                name=f"read-{kind}", kind=kind, base_url="", selector=selectors[kind]
            )
            sel = parse_selector(selectors[kind])
            chars = sum(len(expression(kind, k, sel, 60_000) or "") for k in of_kind(kind).keys)
            poll = {t.pk: _median_ms(lambda t=t: poll_target.apply(kwargs={"target_id": t.pk}))
                    for t in (polled, read)}  # fmt: skip
            keys = sorted({k for c in kinds.get(kind).charts(None) for k in c.series})
            end = timezone.now()

            chart = {t.pk: _median_ms(partial(_charts, t, keys, end)) for t in (polled, read)}
            p, r = poll[polled.pk], poll[read.pk]
            cp, cr = chart[polled.pk], chart[read.pk]
            print(f"{kind:5} {p:10.1f}ms {r:8.1f}ms {r / p:6.2f} {chars:7,}ch "
                  f"{cp:15.1f}ms {cr:8.1f}ms {cr / cp:6.2f}")  # fmt: skip
    finally:
        server.stop()
        sim.stop()


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    run(main)
