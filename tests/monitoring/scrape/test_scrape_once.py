"""scrape_once end to end on loopback: what the poller stores, and failures as results."""

from __future__ import annotations

import json

import pytest

from monitoring.scrape import FetchPolicy, from_text, metrics_url, scrape_once

from .conftest import fixture_text, reply

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

FAST = FetchPolicy(connect_timeout_s=0.5, total_timeout_s=2.0)


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def serve_vllm(fake_server, name: str) -> None:
    body = fixture_text("vllm", f"v0_32_metrics_{name}.txt").encode()
    fake_server.routes["/metrics"] = reply(200, body, {"Content-Type": "text/plain"})


def test_vllm_two_polls_store_gauges_then_rates(fake_server):
    clock = Clock()
    serve_vllm(fake_server, "after")
    first = scrape_once(fake_server.base, "vllm", policy=FAST, clock=clock)
    serve_vllm(fake_server, "later")
    clock.t += 10
    second = scrape_once(fake_server.base, "vllm", first.raw, policy=FAST, clock=clock)

    assert first.ok
    assert second.ok
    keys = {s.key for s in second.samples}
    assert {"vllm.prompt_tokens_per_s", "vllm.ttft_seconds.p95", "scrape.duration_seconds"} <= keys
    assert second.ts == 1010.0
    assert not second.errors


def test_base_url_or_metrics_url_both_work():
    assert metrics_url("http://h:8000") == "http://h:8000/metrics"
    assert metrics_url("http://h:8000/") == "http://h:8000/metrics"
    assert metrics_url("http://h:9400/vllm/a") == "http://h:9400/vllm/a/metrics"
    assert metrics_url("http://h:8000/metrics") == "http://h:8000/metrics"


@pytest.mark.parametrize(
    ("behaviour", "kind"),
    [
        pytest.param(reply(500, b"boom"), "http_status", id="5xx"),
        pytest.param(reply(200, b"<html>login</html>"), "parse", id="html"),
        pytest.param(
            reply(302, b"", {"Location": "http://localhost/x"}), "redirect", id="redirect"
        ),
    ],
)
def test_a_failed_poll_is_a_result_with_an_error_and_no_snapshot(fake_server, behaviour, kind):
    fake_server.routes["/metrics"] = behaviour

    result = scrape_once(fake_server.base, "vllm", policy=FAST, token="tok-123")

    assert not result.ok
    assert result.raw is None  # the poller keeps its previous snapshot
    assert result.samples == []
    assert [e.kind for e in result.errors] == [kind]
    assert "tok-123" not in json.dumps(result.as_dict())


def test_unknown_kind_is_a_programming_error():
    with pytest.raises(ValueError, match="kind"):
        scrape_once("http://127.0.0.1:9", "prometheus")


def serve_ray_dashboard(fake_server, exporters: list[str]) -> None:
    fake_server.routes["/api/prometheus/sd"] = reply(
        200, json.dumps([{"labels": {"job": "ray"}, "targets": exporters}]).encode()
    )
    for name, path in (
        ("dashboard_placement_groups.json", "/api/v0/placement_groups"),
        ("dashboard_cluster_status.json", "/api/cluster_status"),
    ):
        fake_server.routes[path] = reply(200, fixture_text("ray", name).encode())
    fake_server.routes["/metrics"] = reply(
        200, fixture_text("ray", "head_exporter_metrics_1.txt").encode()
    )


def test_ray_cluster_from_the_dashboard_with_one_dead_exporter(fake_server):
    alive = f"127.0.0.1:{fake_server.port}"
    dead = "127.0.0.1:9"  # discard port: nothing listens
    serve_ray_dashboard(fake_server, [alive, dead])

    result = scrape_once(fake_server.base, "ray", policy=FAST)

    assert result.ok  # partial: one node answered
    got = {s.series_id: s.value for s in result.samples}
    assert got[f'ray.node.resources_used{{node="{alive}",resource="GPU"}}'] == 2
    assert got["ray.cluster.exporters"] == 2
    assert got["ray.cluster.exporters_failed"] == 1
    assert got['ray.cluster.resources_in_use{resource="GPU"}'] == 0
    assert [e.kind for e in result.errors] == ["connect"]
    assert result.errors[0].where == "http://127.0.0.1:9/metrics"
    assert result.info["placement_groups_pending"][0]["scheduling_state"] == "INFEASIBLE"


def test_ray_discovery_falls_back_to_nodes_summary(fake_server):
    serve_ray_dashboard(fake_server, [])
    fake_server.routes["/api/prometheus/sd"] = reply(404, b"")
    summary = json.loads(fixture_text("ray", "dashboard_nodes_summary.json"))
    summary["data"]["summary"][0]["raylet"]["metricsExportPort"] = fake_server.port
    fake_server.routes["/nodes"] = reply(200, json.dumps(summary).encode())

    result = scrape_once(fake_server.base, "ray", policy=FAST)

    assert result.ok
    assert result.info["nodes"][0]["head"] is True
    assert [e.kind for e in result.errors] == ["http_status"]


def test_a_dashboard_answering_json_of_another_shape_is_a_failed_poll_not_a_crash(fake_server):
    fake_server.routes["/api/prometheus/sd"] = reply(200, b'[{"targets": 5}]')
    fake_server.routes["/nodes"] = reply(200, b'{"result": true, "data": {"summary": ["x"]}}')

    result = scrape_once(fake_server.base, "ray", policy=FAST)

    assert not result.ok
    assert {e.kind for e in result.errors} == {"source"}


def test_ray_dashboard_down_is_a_failed_poll():
    result = scrape_once("http://127.0.0.1:9", "ray", policy=FAST)

    assert not result.ok
    assert {e.kind for e in result.errors} == {"connect"}


def test_ray_single_exporter_url(fake_server):
    serve_ray_dashboard(fake_server, [])

    result = scrape_once(f"{fake_server.base}/metrics", "ray", policy=FAST)

    assert result.ok
    assert any(s.key == "ray.actors" for s in result.samples)


def test_from_text_matches_scrape_once_for_the_same_payload(fake_server):
    serve_vllm(fake_server, "after")

    live = scrape_once(fake_server.base, "vllm", policy=FAST, clock=Clock(5.0))
    saved = from_text(fixture_text("vllm", "v0_32_metrics_after.txt"), "vllm", ts=5.0)

    live_values = {s.series_id: s.value for s in live.samples if not s.key.startswith("scrape.")}
    assert live_values == {s.series_id: s.value for s in saved.samples}
