"""The simulator parses exactly like the real servers, and behaves (load, restarts, slowness)."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest

from monitoring.scrape import FetchPolicy, from_text, ray_dashboard, scrape_once
from monitoring.scrape import ray as ray_extract
from monitoring.scrape import vllm as vllm_extract
from monitoring.scrape.parse import parse
from monitoring.simulator import Simulator
from monitoring.simulator.load import LoadModel
from monitoring.simulator.ray_sim import SimRayCluster
from monitoring.simulator.vllm_sim import SimVllm, VllmProfile

FIXTURES = Path(__file__).parent.parent / "fixtures"
# cache_config_info labels the extractor reads (the real one has ~30 more).
CACHE_LABELS_READ = {
    "block_size", "num_gpu_blocks", "kv_cache_size_tokens", "kv_cache_max_concurrency",
    "gpu_memory_utilization", "engine",
}  # fmt: skip


def real(*parts: str) -> str:
    return FIXTURES.joinpath(*parts).read_text()


def sim_vllm(**overrides) -> SimVllm:
    return SimVllm(VllmProfile(name="t", model="org/model", base_rps=5.0, seed=3, **overrides))


def two_polls(texts: tuple[str, str], kind: str, **kw) -> set[str]:
    first = from_text(texts[0], kind, ts=100.0, **kw)
    second = from_text(texts[1], kind, ts=115.0, previous=first.raw, **kw)
    return {s.key for s in first.samples} | {s.key for s in second.samples}


def shapes(text: str, wanted) -> dict[str, tuple[str, frozenset[str]]]:
    out = {}
    for name, family in parse(text, wanted).items():
        labels = frozenset(k for s in family.samples for k in s.labels if k != "le")
        out[name] = (family.type, labels)
    return out


def test_simulated_vllm_yields_the_same_series_keys_as_the_real_032_server():
    sim = sim_vllm()
    now = time.time()
    sim_texts = (sim.metrics(now).decode(), sim.metrics(now + 15).decode())
    real_texts = (real("vllm", "v0_32_metrics_after.txt"), real("vllm", "v0_32_metrics_later.txt"))

    assert two_polls(sim_texts, "vllm") == two_polls(real_texts, "vllm")


def test_simulated_vllm_families_have_the_real_types_and_labels():
    sim = shapes(sim_vllm().metrics(time.time()).decode(), vllm_extract.WANTED)
    got = shapes(real("vllm", "v0_32_metrics_after.txt"), vllm_extract.WANTED)

    assert set(sim) == set(got)
    for name, (kind, labels) in got.items():
        assert sim[name][0] == kind, name
        if name == "vllm:cache_config_info":
            assert labels & CACHE_LABELS_READ <= sim[name][1]
        else:
            assert sim[name][1] == labels, name


def test_simulated_ray_covers_every_series_key_of_the_real_head():
    cluster = SimRayCluster(exporter_ports=(1, 2), dashboard_port=3)
    now = time.time()
    sim_keys = set()
    for port in (1, 2):
        texts = (cluster.exporter(port, now).decode(), cluster.exporter(port, now + 15).decode())
        sim_keys |= two_polls(texts, "ray", instance=f"n{port}")
    real_keys = two_polls(
        (real("ray", "head_exporter_metrics_1.txt"), real("ray", "head_exporter_metrics_2.txt")),
        "ray",
    )

    assert real_keys <= sim_keys
    assert {"ray.node.gpu_utilization_pct", "ray.serve.http_latency_ms.p95"} <= sim_keys


def test_simulated_ray_families_have_the_real_types_and_labels():
    cluster = SimRayCluster(exporter_ports=(1, 2), dashboard_port=3)
    sim = shapes(cluster.exporter(1, time.time()).decode(), ray_extract.WANTED)
    got = shapes(real("ray", "head_exporter_metrics_1.txt"), ray_extract.WANTED)

    for name, (kind, labels) in got.items():
        assert sim[name] == (kind, labels), name


def test_simulated_dashboard_json_reads_like_the_real_one():
    cluster = SimRayCluster(exporter_ports=(9402, 9403), dashboard_port=9401)
    now = cluster.started + 400  # inside a "pending" window

    sd = ray_dashboard.exporters_from_sd(cluster.dashboard("/api/prometheus/sd", now)[1])
    nodes = ray_dashboard.nodes_from_summary(cluster.dashboard("/nodes?view=summary", now)[1])
    groups = ray_dashboard.placement_groups(
        cluster.dashboard("/api/v0/placement_groups?detail=1", now)[1]
    )
    reserved = ray_dashboard.reservations(cluster.dashboard("/api/cluster_status", now)[1], groups)

    assert sd == ["127.0.0.1:9402", "127.0.0.1:9403"]
    assert [n.exporter for n in nodes] == sd
    assert [g.scheduling_state for g in groups if g.state == "PENDING"] == ["NO_RESOURCES"]
    got = {s.series_id: s.value for s in reserved}
    assert got['ray.cluster.resources_reserved{resource="GPU"}'] == 6
    assert got['ray.cluster.resources_in_use{resource="GPU"}'] == 6


def test_histograms_stay_consistent_and_counters_only_grow():
    sim = sim_vllm()
    now = time.time()
    previous = None
    for step in range(5):
        result = from_text(sim.metrics(now + 15 * step).decode(), "vllm", ts=now + 15 * step)
        for hist in result.raw.histograms.values():
            cumulative = [c for _, c in hist.buckets]
            assert cumulative == sorted(cumulative)
            assert hist.count == cumulative[-1]
        if previous is not None:
            for sid, value in result.raw.counters.items():
                assert value >= previous.counters.get(sid, 0)
        previous = result.raw


def test_restart_resets_counters_and_never_gives_a_negative_rate():
    sim = sim_vllm(restart_every_s=30.0, restart_down_s=2.0)
    t0 = sim.started
    first = from_text(sim.metrics(t0 + 20).decode(), "vllm", ts=t0 + 20)

    assert sim.is_down(t0 + 31)
    assert not sim.is_down(t0 + 34)
    second = from_text(sim.metrics(t0 + 35).decode(), "vllm", ts=t0 + 35, previous=first.raw)

    assert second.raw.epoch != first.raw.epoch
    assert all(s.value >= 0 for s in second.samples)
    assert not any(s.key.endswith("_per_s") for s in second.samples)


def test_load_is_diurnal_and_bursty_but_never_negative():
    load = LoadModel(base_rps=10.0, day_s=100.0, burst_gap_s=10.0, seed=1)

    rates = [load.rps(t) for t in range(0, 1000)]

    assert min(rates) >= 10.0 * 0.15 - 1e-9
    assert max(rates) > 10.0  # bursts happen
    assert all(load.arrivals(t, 15.0) >= 0 for t in range(1000, 1100))


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_served_targets_poll_end_to_end():
    sim = Simulator(port=0, vllm_count=4, ray=True, faults=False)
    targets = sim.start()
    try:
        assert [t.kind for t in targets] == ["vllm"] * 4 + ["gpu"] * 5 + ["ray"]
        index = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{sim.port}/").read())
        assert [t["base_url"] for t in index] == [t.base_url for t in targets]
        policy = FetchPolicy(total_timeout_s=5)
        for target in targets:
            result = scrape_once(target.base_url, target.kind, policy=policy)
            assert result.ok, result.errors
        ray_result = scrape_once(targets[-1].base_url, "ray", policy=policy)
        assert sum(s.key == "ray.node.gpu_utilization_pct" for s in ray_result.samples) >= 7
        gpu_result = scrape_once(targets[4].base_url, "gpu", policy=policy)
        assert gpu_result.info["hostname"] == targets[4].name == "a800-node-1"
    finally:
        sim.stop()


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_slow_and_restarting_servers_fail_polls_as_expected():
    sim = Simulator(port=0, vllm_count=3, ray=False, faults=True)
    targets = {t.name: t for t in sim.start()}
    try:
        slow = sim.vllm["mistral-7b"].profile
        slow.slow_probability, slow.slow_delay_s = 1.0, 1.0
        restarting = sim.vllm["qwen-32b"]
        restarting.profile.restart_every_s = 0.001

        timed_out = scrape_once(
            targets["mistral-7b"].base_url, "vllm", policy=FetchPolicy(total_timeout_s=0.3)
        )
        down = scrape_once(targets["qwen-32b"].base_url, "vllm")

        assert [e.kind for e in timed_out.errors] == ["timeout"]
        assert [e.kind for e in down.errors] == ["http_status"]
        assert "503" in down.errors[0].message
    finally:
        sim.stop()


def test_simulator_refuses_to_listen_beyond_loopback():
    with pytest.raises(ValueError, match="loopback"):
        Simulator(host="0.0.0.0")
