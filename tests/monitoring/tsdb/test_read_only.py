"""Read-only mode against a real Prometheus that scrapes the simulator: a target is a PromQL
selector, ServePlan polls nothing for it, and its tiles, series, plan vs reality, evidence and
alerts work as for a polled target. A second server speaks vLLM 0.6's metric names."""

from __future__ import annotations

import re
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from monitoring import observed, tasks
from monitoring.evidence import measure_window
from monitoring.models import AlertEvent, AlertRule, PollStatus, Sample
from monitoring.simulator import Simulator
from tests.monitoring.tsdb import servers
from tests.monitoring.tsdb.servers import free_port

pytestmark = [pytest.mark.django_db, pytest.mark.enable_socket, pytest.mark.tsdb]

OLD_PAYLOAD = Path(__file__).parents[1] / "fixtures" / "vllm" / "v0_6_synth_metrics_a.txt"
CUMULATIVE = re.compile(r"^(vllm:\S+?(?:_total|_bucket|_count|_sum)(?:\{[^}]*\})?) (\S+)$", re.M)


def _old_vllm(n: int) -> bytes:
    """vLLM 0.6's page, its counters and histograms grown n-fold (a server under load)."""
    text = OLD_PAYLOAD.read_text()
    return CUMULATIVE.sub(lambda m: f"{m.group(1)} {float(m.group(2)) * n}", text).encode()


@pytest.fixture(scope="module")
def old_server():
    scrapes = iter(range(1, 10**6))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = _old_vllm(next(scrapes))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            return

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def watched(tmp_path_factory, old_server):
    """The simulator and the old server, scraped every second by a Prometheus of their own."""
    if servers.binary("prometheus") is None:
        pytest.skip("prometheus is not installed (Debian package prometheus; scripts/test-env)")
    sim = Simulator(port=0, vllm_count=1, ray=False, gpu_machines=0, faults=False)
    sim.start()
    vllm = next(t for t in sim.targets() if t.kind == "vllm")
    address, path = vllm.base_url.removeprefix("http://").split("/", 1)
    scrape = [("vllm-sim", address, f"/{path}/metrics"), ("vllm-old", old_server, "/metrics")]
    prometheus = servers.start_prometheus(tmp_path_factory.mktemp("scraping"), scrape=scrape)
    try:
        # Windows of a few 5 s polls need history: wait for 15 scrapes of each server.
        def scraped() -> bool:
            answer = httpx.get(
                f"{prometheus.url}/api/v1/query",
                params={"query": "count(count_over_time(up[1m]) >= 15)"},
            ).json()
            result = answer["data"]["result"]
            return bool(result) and result[0]["value"][1] == "2"

        servers.eventually(scraped, timeout_s=90)
        yield prometheus, address, old_server
    finally:
        prometheus.stop()
        sim.stop()


@pytest.fixture
def reading(watched, settings):
    prometheus, sim_address, old_address = watched
    settings.MONITORING_PROMETHEUS_URL = prometheus.url  # polled targets stay embedded
    return sim_address, old_address


def _poll(target):
    tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": int(time.time() * 1000)})
    target.refresh_from_db()


def test_a_read_only_target_is_read_from_prometheus_and_polls_nothing(
    reading, make_target, viewer_api
):
    sim_address, _ = reading
    target = make_target(
        base_url="", selector=f'{{ job="vllm-sim", instance="{sim_address}" }}', poll_interval_s=5
    )
    assert target.selector == f'{{job="vllm-sim",instance="{sim_address}"}}'  # canonical
    AlertRule.objects.create(
        target=target, name="busy", series="vllm.requests_running", comparison="ge", threshold=0
    )

    _poll(target)

    assert target.last_status == PollStatus.OK
    assert target.latest["vllm.requests_running"] >= 0
    assert target.latest["vllm.generation_tokens_per_s"] > 0
    assert target.latest["poll.up"] == 1.0
    assert not Sample.objects.filter(target=target).exists()  # nothing stored, nothing polled
    assert AlertEvent.objects.filter(target=target, rule__name="busy").exists()
    overview = viewer_api.get("/api/v1/monitoring/overview/").json()
    tile = next(t for t in overview["tiles"] if t["id"] == target.pk)
    assert tile["state"] == "up"
    assert tile["values"]["requests_running"] is not None
    assert tile["values"]["kv_cache_usage_pct"] is not None


def test_its_series_plan_vs_reality_and_evidence_come_from_prometheus(
    reading, make_target, viewer_api
):
    sim_address, _ = reading
    target = make_target(
        base_url="", selector=f'{{job="vllm-sim",instance="{sim_address}"}}', poll_interval_s=5
    )
    _poll(target)

    answer = viewer_api.get(
        f"/api/v1/monitoring/targets/{target.pk}/series/",
        {"series": "vllm.requests_running,vllm.ttft_seconds.p95", "range": "15m"},
    )
    assert answer.status_code == 200
    got = {s["key"]: [v for v in s["v"] if v is not None] for s in answer.json()["series"]}
    assert got["vllm.requests_running"]
    assert all(v > 0 for v in got["vllm.ttft_seconds.p95"])
    fleet = viewer_api.get("/api/v1/monitoring/fleet-series/", {"series": "vllm.requests_running"})
    assert [v for v in fleet.json()["series"][0]["v"] if v is not None]

    def observe():
        end = timezone.now()
        seen = observed.observe(target, end - timedelta(minutes=2), end)
        return seen.polls > 1 and seen.ttft_p95_ms is not None and seen

    seen = servers.eventually(observe)
    assert seen.polls > 0
    assert seen.concurrency is not None
    assert seen.ttft_p95_ms is not None
    assert seen.avg_output_tokens is not None
    end = timezone.now()
    measured = {m.kind for m in measure_window(target, end - timedelta(minutes=2), end)}
    assert {"ttft_p95", "itl_p95", "completion_rate"} <= measured


def test_old_vllm_metric_names_are_read_under_their_new_keys(reading, make_target):
    _, old_address = reading
    target = make_target(
        base_url="", selector=f'{{job="vllm-old",instance="{old_address}"}}', poll_interval_s=5
    )

    _poll(target)

    assert target.last_status == PollStatus.OK
    # vllm:gpu_cache_usage_perc 0.41 (renamed vllm:kv_cache_usage_perc)
    assert target.latest["vllm.kv_cache_usage_pct"] == pytest.approx(41.0)
    # vllm:time_per_output_token_seconds (renamed vllm:inter_token_latency_seconds)
    assert target.latest["vllm.inter_token_latency_seconds.p95"] > 0
    assert target.latest["vllm.prefix_cache_hit_ratio"] == pytest.approx(0.35)


def test_a_selector_without_a_prometheus_or_a_match_is_a_failed_poll(
    reading, make_target, settings
):
    target = make_target(base_url="", selector='{job="nothing-scrapes-this"}', poll_interval_s=5)
    _poll(target)
    assert (target.last_status, target.last_error_kind) == (PollStatus.ERROR, "scrape")

    settings.MONITORING_PROMETHEUS_URL = ""
    _poll(target)
    assert target.last_error_kind == "store"
    assert "MONITORING_PROMETHEUS_URL" in target.last_error


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"base_url": "http://127.0.0.1:9/x", "selector": '{job="a"}'}, "selector"),
        ({"base_url": "", "selector": ""}, "base_url"),
        ({"base_url": "", "selector": "up"}, "selector"),
        ({"base_url": "", "selector": '{job="a"}', "kind": "ray"}, "selector"),
    ],
)
def test_a_target_has_a_url_or_a_valid_selector(make_target, fields, field):
    with pytest.raises(ValidationError) as caught:
        make_target(**fields)
    assert field in caught.value.message_dict
