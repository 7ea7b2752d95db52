"""Per-target limits and the poll's time budget (issue 15, item 3): a page over a limit fails the
poll before the Prometheus parser runs, and a hung Ray dashboard costs one budget, not several."""

from __future__ import annotations

import json
import threading
import time

import pytest

from monitoring.scrape import FetchPolicy, from_text, scrape_once
from monitoring.scrape.errors import LimitError, ParseError, ScrapeError
from monitoring.scrape.limits import ScrapeLimits, applied
from monitoring.scrape.parse import parse

from .conftest import fixture_text, reply

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]


def page(series: int, *, labels: int = 1, value_chars: int = 4) -> str:
    head = "# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n"
    rows = []
    for i in range(series):
        pairs = ",".join(f'l{j}="{str(i).rjust(value_chars, "x")}"' for j in range(labels))
        rows.append(f"vllm:num_requests_running{{{pairs}}} 1")
    return head + "\n".join(rows) + "\n"


def test_sample_limit_counts_every_sample_of_the_page_wanted_or_not():
    text = page(3) + "unrelated_metric 1\n" * 10

    with applied(ScrapeLimits(sample_limit=12)), pytest.raises(LimitError) as info:
        parse(text, ["vllm:num_requests_running"])

    assert "sample_limit" in str(info.value)
    with applied(ScrapeLimits(sample_limit=13)):
        assert len(parse(text, ["vllm:num_requests_running"])) == 1


def test_label_limit_and_lengths():
    with applied(ScrapeLimits(label_limit=3)), pytest.raises(LimitError, match="label_limit"):
        parse(page(1, labels=4), ["vllm:num_requests_running"])
    with (
        applied(ScrapeLimits(label_value_length_limit=10)),
        pytest.raises(LimitError, match="label_value_length_limit"),
    ):
        parse(page(1, value_chars=11), ["vllm:num_requests_running"])
    with applied(ScrapeLimits(label_limit=4, label_value_length_limit=11)):
        assert parse(page(2, labels=4, value_chars=11), ["vllm:num_requests_running"])


@pytest.mark.parametrize("kind", ["vllm", "ray", "gpu"])
def test_every_kind_refuses_a_page_over_the_limits(kind):
    gpu_page = page(3).replace("vllm:num_requests_running", "DCGM_FI_DEV_GPU_UTIL")
    long_line = "DCGM_FI_DEV_GPU_UTIL{" + ",".join(f'x{i}="v"' for i in range(2000)) + "} 1\n"

    with applied(ScrapeLimits(sample_limit=2)):
        over_count = from_text(gpu_page, kind, ts=0)
    with applied(ScrapeLimits(label_limit=2)):
        over_length = from_text(long_line, kind, ts=0)

    assert [e.kind for e in over_count.errors] == ["limit"]
    assert "sample_limit" in over_count.errors[0].message
    assert [e.kind for e in over_length.errors] == ["limit"]
    assert "longer than the label limits" in over_length.errors[0].message


def test_a_line_longer_than_the_label_limits_allow_stops_the_scan_before_parsing():
    limits = ScrapeLimits(label_limit=2, label_name_length_limit=8, label_value_length_limit=8)
    monster = "unwanted{" + ",".join(f'x{i}="v"' for i in range(2000)) + "} 1\n"

    with applied(limits), pytest.raises(LimitError, match="longer than the label limits"):
        parse(monster, ["vllm:num_requests_running"])


def test_zero_switches_a_limit_off():
    off = ScrapeLimits(sample_limit=0, label_limit=0)
    with applied(off):
        assert parse(page(200, labels=80), ["vllm:num_requests_running"])


def test_errors_never_quote_the_page():
    secret = "DATABASE_PASSWORD=hunter2"
    for text in (f"{secret}\n", f"<html>{secret}</html>\n", 'm{a="' + secret + "} 1\n"):
        with pytest.raises(ParseError) as info:
            parse(text, ["m"])
        assert "hunter2" not in str(info.value)


def test_a_poll_over_a_limit_stores_nothing_and_says_why(fake_server):
    fake_server.routes["/metrics"] = reply(200, page(500).encode())
    policy = FetchPolicy(limits=ScrapeLimits(sample_limit=100), total_timeout_s=5)

    result = scrape_once(fake_server.base, "vllm", policy=policy)

    assert not result.ok
    assert result.samples == []
    assert result.errors[0].kind == "limit"


def test_the_ray_exporters_a_dashboard_lists_are_capped(fake_server):
    listed = [f"127.0.0.1:{fake_server.port}"] + [f"127.0.0.1:{p}" for p in range(20000, 20300)]
    fake_server.routes["/api/prometheus/sd"] = reply(
        200, json.dumps([{"labels": {}, "targets": listed}]).encode()
    )
    fake_server.routes["/metrics"] = reply(
        200, fixture_text("ray", "head_exporter_metrics_1.txt").encode()
    )
    policy = FetchPolicy(limits=ScrapeLimits(max_exporters=3), connect_timeout_s=0.5)

    result = scrape_once(fake_server.base, "ray", policy=policy)

    assert len(result.exporters) == 3
    assert any(e.kind == "limit" and "301 exporters" in e.message for e in result.errors)


def hang(stop: threading.Event):
    def behave(h):
        stop.wait(30)  # accept, read the request, never answer

    return behave


def test_a_hung_ray_dashboard_costs_one_budget_not_one_timeout_per_request(fake_server):
    for path in ("/api/prometheus/sd", "/nodes", "/api/v0/placement_groups"):
        fake_server.routes[path] = hang(fake_server.stop)
    policy = FetchPolicy(connect_timeout_s=0.5, total_timeout_s=1.0)

    started = time.monotonic()
    result = scrape_once(fake_server.base, "ray", policy=policy)
    elapsed_s = time.monotonic() - started

    assert not result.ok
    assert {e.kind for e in result.errors} == {"timeout"}
    # Discovery asks two endpoints; each used to get its own full timeout (2 s here).
    assert elapsed_s < 1.9


def test_discovered_exporters_pass_the_same_allowlist(fake_server):
    from monitoring.scrape.fetch import Allowlist

    listed = [f"127.0.0.1:{fake_server.port}", "10.66.0.1:9100", "169.254.169.254:80"]
    fake_server.routes["/api/prometheus/sd"] = reply(
        200, json.dumps([{"labels": {}, "targets": listed}]).encode()
    )
    fake_server.routes["/metrics"] = reply(
        200, fixture_text("ray", "head_exporter_metrics_1.txt").encode()
    )
    policy = FetchPolicy(allowlist=Allowlist.parse(["127.0.0.1"]), connect_timeout_s=0.5)

    result = scrape_once(fake_server.base, "ray", policy=policy)

    refused = {e.where: e.kind for e in result.errors if e.kind == "forbidden_address"}
    assert result.ok  # the allowed exporter answered
    assert set(refused) == {"http://10.66.0.1:9100/metrics", "http://169.254.169.254:80/metrics"}
    # Only the dashboard (its API and node list) and the allowed exporter are asked.
    assert all(s["path"].startswith(("/api", "/nodes", "/metrics")) for s in fake_server.seen)


def test_gpu_and_ray_messages_never_quote_the_page():
    from monitoring.scrape import gpu, ray_dashboard

    page = fixture_text("gpu", "dcgm_t4_datadog.txt") + "SECRET_KEY=hunter2\n"
    extracted = gpu.extract(page, 0.0)
    assert "hunter2" not in " ".join(extracted.warnings)

    with pytest.raises(ScrapeError) as info:
        ray_dashboard.nodes_from_summary(
            json.dumps({"result": False, "msg": "hunter2", "data": {}})
        )
    assert "hunter2" not in str(info.value)
