"""Read-only mode against a real Prometheus that scrapes the simulator: a target is a PromQL
selector, ServePlan polls nothing for it, and its tiles, series, plan vs reality, evidence and
alerts work as for a polled target. A second server speaks vLLM 0.6's metric names. The
simulator's Ray cluster (one scrape target per node exporter) and dcgm-exporter read through
selectors show the series and labels that polling them shows."""

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

from monitoring import tasks
from monitoring.models import AlertEvent, AlertRule, PollStatus, Sample
from monitoring.reality import observation
from monitoring.reality.evidence import measure_window
from monitoring.simulator import Simulator
from monitoring.targets import kinds
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
    sim = Simulator(port=0, vllm_count=1, ray=True, gpu_machines=1, faults=False)
    sim.start()
    by_kind = {t.kind: t for t in sim.targets()}
    address, path = by_kind["vllm"].base_url.removeprefix("http://").split("/", 1)
    gpu_address, gpu_path = by_kind["gpu"].base_url.removeprefix("http://").split("/", 1)
    sd = httpx.get(f"{by_kind['ray'].base_url}/api/prometheus/sd").json()
    ray_exporters = [t for group in sd for t in group["targets"]]
    scrape = [
        ("vllm-sim", address, f"/{path}/metrics"),
        ("vllm-old", old_server, "/metrics"),
        ("dcgm-sim", gpu_address, f"/{gpu_path}/metrics"),
        *(("ray-sim", exporter, "/metrics") for exporter in ray_exporters),
    ]
    prometheus = servers.start_prometheus(tmp_path_factory.mktemp("scraping"), scrape=scrape)
    try:
        # Windows of a few 5 s polls need history: wait for 15 scrapes of each server.
        def scraped() -> bool:
            answer = httpx.get(
                f"{prometheus.url}/api/v1/query",
                params={"query": "count(count_over_time(up[1m]) >= 15)"},
            ).json()
            result = answer["data"]["result"]
            return bool(result) and result[0]["value"][1] == str(len(scrape))

        servers.eventually(scraped, timeout_s=90)
        yield prometheus, address, old_server, sim
    finally:
        prometheus.stop()
        sim.stop()


@pytest.fixture
def reading(watched, settings, read_only_allowed):
    prometheus, sim_address, old_address, _ = watched
    settings.MONITORING_PROMETHEUS_URL = prometheus.url  # polled targets stay embedded
    # The jobs the simulator's Prometheus scrapes, allowed by the selector policy.
    read_only_allowed("vllm-sim", "vllm-old", "dcgm-sim", "ray-sim", "nothing-scrapes-this")
    return sim_address, old_address


def _poll(target):
    tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": int(time.time() * 1000)})
    target.refresh_from_db()


def test_a_read_only_target_is_read_from_prometheus_and_polls_nothing(
    reading, sim, make_target, viewer_api
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
    # The KV capacity, from vllm:cache_config_info's labels, as a poll of the server reads it.
    polled = make_target(base_url=next(t for t in sim.targets() if t.kind == "vllm").base_url)
    _poll(polled)
    for key in ("vllm.kv_cache_capacity_tokens", "vllm.kv_cache_blocks"):
        assert target.latest[key] == polled.latest[key]
    # Its cache config, engines and model names, from the same labels a poll reads them from;
    # max_model_len is only in /v1/models, which a read-only target does not ask.
    for fact in ("cache_config", "engines", "models"):
        assert target.info[fact] == polled.info[fact], fact
    served, polled_served = observation.served_config(target), observation.served_config(polled)
    assert served.models == tuple(polled.info["models"])
    assert served.kv_blocks == polled_served.kv_blocks
    assert served.max_model_len is None
    assert polled_served.max_model_len is not None
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
        seen = observation.observe(target, end - timedelta(minutes=2), end)
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
    ],
)
def test_a_target_has_a_url_or_a_valid_selector(make_target, fields, field):
    with pytest.raises(ValidationError) as caught:
        make_target(**fields)
    assert field in caught.value.message_dict


@pytest.fixture
def sim(watched, reading):
    return watched[3]


def _labelled(latest: dict[str, float], prefix: str) -> dict[str, float]:
    return {sid: v for sid, v in latest.items() if sid.startswith(prefix) and "{" in sid}


def _same_within(polled: dict[str, float], read: dict[str, float], rel: float) -> None:
    assert polled
    assert set(read) == set(polled)
    for sid, value in polled.items():
        assert read[sid] == pytest.approx(value, rel=rel, abs=1.0), sid


def test_a_read_only_gpu_exporter_shows_what_polling_it_shows(sim, make_target, viewer_api):
    exporter = next(t for t in sim.targets() if t.kind == "gpu")
    address, path = exporter.base_url.removeprefix("http://").split("/", 1)
    polled = make_target(kind="gpu", base_url=exporter.base_url, poll_interval_s=5)
    read = make_target(
        kind="gpu", base_url="", selector=f'{{job="dcgm-sim",instance="{address}"}}',
        poll_interval_s=5,
    )  # fmt: skip
    _poll(polled)
    _poll(read)

    assert read.last_status == PollStatus.OK, read.last_error
    for key in ("gpu.machine.gpus", "gpu.machine.memory_total_mib"):
        assert read.latest[key] == polled.latest[key]
    for key in ("gpu.machine.utilization_pct", "gpu.machine.memory_used_mib"):
        assert read.latest[key] == pytest.approx(polled.latest[key], rel=0.5, abs=2.0)
    # The per-GPU series, under the poller's labels (gpu="0", ...), same values within noise.
    _same_within(_labelled(polled.latest, "gpu."), _labelled(read.latest, "gpu."), rel=0.5)
    assert set(read.info["readings"]) == set(polled.info["readings"])  # the Machines view's GPUs
    assert read.info["gpus"] == polled.info["gpus"]  # uuid, model, ... from the exporter's labels
    assert read.info["hostname"] == polled.info["hostname"]  # links the machine by host name
    assert not Sample.objects.filter(target=read).exists()

    answer = viewer_api.get(
        f"/api/v1/monitoring/targets/{read.pk}/series/",
        {"series": "gpu.utilization_pct", "range": "15m"},
    )
    gpus = {
        s["labels"]["gpu"] for s in answer.json()["series"] if s["key"] == "gpu.utilization_pct"
    }
    assert gpus == {gid for gid in polled.info["readings"]}
    page = kinds.get("gpu").page_state(read)  # the GPU page and the Machines view's cells
    assert [g["id"] for g in page["gpus"]] == [
        g["id"] for g in kinds.get("gpu").page_state(polled)["gpus"]
    ]


def test_a_read_only_ray_cluster_shows_what_polling_it_shows(sim, make_target):
    dashboard = next(t for t in sim.targets() if t.kind == "ray")
    polled = make_target(kind="ray", base_url=dashboard.base_url, poll_interval_s=5)
    read = make_target(kind="ray", base_url="", selector='{job="ray-sim"}', poll_interval_s=5)
    _poll(polled)
    _poll(read)

    assert read.last_status == PollStatus.OK, read.last_error
    assert read.latest["ray.cluster.nodes_scraped"] == polled.latest["ray.cluster.nodes_scraped"]
    for sid in ('ray.cluster.resources_used{resource="GPU"}', "ray.cluster.gpus_reporting"):
        assert read.latest[sid] == pytest.approx(polled.latest[sid], abs=1.0), sid
    # (Not utilisation: the simulator's GPU 3 reports -1, no reading, in 1 % of its scrapes.)
    got = {r.key + str(sorted(r.labels)) for r in _rows(read, "ray.node.gpu_memory_used_mib")}
    want = {r.key + str(sorted(r.labels)) for r in _rows(polled, "ray.node.gpu_memory_used_mib")}
    assert got  # per node and GPU, the node named by its exporter address
    assert got == want
    page, polled_page = kinds.get("ray").page_state(read), kinds.get("ray").page_state(polled)
    assert [n["node"] for n in page["nodes"]] == [n["node"] for n in polled_page["nodes"]]
    assert [n["gpu_count"] for n in page["nodes"]] == [n["gpu_count"] for n in polled_page["nodes"]]
    # The facts a poll keeps from exporter labels: GPU names, the session, each node's address.
    assert read.info["gpus"] == polled.info["gpus"]
    assert read.info["sessions"] == polled.info["sessions"]
    by_exporter = {n["exporter"]: n["ip"] for n in polled.info["nodes"]}
    assert {n["exporter"]: n["ip"] for n in read.info["nodes"]} == by_exporter
    assert page["read_only"]
    assert not polled_page["read_only"]


def _rows(target, key):
    from monitoring import stores

    target.refresh_from_db()
    return stores.current().latest(stores.ref(target), [key])
