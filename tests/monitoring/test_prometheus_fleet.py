"""The Prometheus store reads the whole fleet's sums from the fleet series the scheduler writes
(one series per key), and sums the targets' own series only for a subset or before the first
tick."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs

import httpx
import pytest

from monitoring import stores
from tests.monitoring.factories import mock_prometheus_store

pytestmark = pytest.mark.django_db

END = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
KEY = "vllm.requests_running"


def _store(answer_fleet: bool):
    asked = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/status/buildinfo"):
            return httpx.Response(200, json={"status": "success", "data": {}})
        query = parse_qs(request.content.decode())["query"][0]
        asked.append(query)
        values = [[END.timestamp(), "7"]] if answer_fleet or 'target="0"' not in query else []
        result = [{"metric": {}, "values": values}] if values else []
        return httpx.Response(
            200, json={"status": "success", "data": {"resultType": "matrix", "result": result}}
        )

    store = mock_prometheus_store(handler)
    return store, asked


def test_the_whole_fleet_reads_the_fleet_series(make_target):
    refs = stores.refs([make_target(), make_target()])
    store, asked = _store(answer_fleet=True)
    answer = store.fleet_sum(refs, [KEY], END - timedelta(hours=1), END, 100)
    assert len(asked) == 1
    assert 'serveplan_target="0"' in asked[0]
    assert [v for v in answer.series[0].values if v is not None] == [7.0]


def test_a_subset_or_a_window_without_ticks_sums_the_targets_series(make_target):
    a, b = make_target(), make_target()
    store, asked = _store(answer_fleet=True)
    store.fleet_sum(stores.refs([a]), [KEY], END - timedelta(hours=1), END, 100)
    assert len(asked) == 1
    assert f'serveplan_target="{a.pk}"' in asked[0]

    store, asked = _store(answer_fleet=False)  # copied history: no tick wrote the fleet series
    answer = store.fleet_sum(stores.refs([a, b]), [KEY], END - timedelta(hours=1), END, 100)
    assert len(asked) == 2
    assert f'serveplan_target=~"{a.pk}|{b.pk}"' in asked[1]
    assert [v for v in answer.series[0].values if v is not None] == [7.0]


@pytest.mark.parametrize(
    ("build", "window"),
    [
        ({"version": "2.42.0+ds"}, "35999ms"),  # Prometheus 2: ranges include their left end
        ({"version": "3.1.0"}, "36000ms"),
        ({}, "36000ms"),  # VictoriaMetrics answers its build info empty
    ],
)
def test_a_bucket_leaves_out_its_left_end_on_every_server(build, window, make_target):
    asked = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/status/buildinfo"):
            return httpx.Response(200, json={"status": "success", "data": build})
        asked.append(parse_qs(request.content.decode())["query"][0])
        return httpx.Response(
            200, json={"status": "success", "data": {"resultType": "matrix", "result": []}}
        )

    store = mock_prometheus_store(handler)
    store.fleet_sum(stores.refs([make_target()]), [KEY], END - timedelta(hours=1), END, 100)
    assert asked[-1].endswith(f"[{window}]))")


def test_a_server_without_build_info_is_asked_once(make_target):
    probes = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/status/buildinfo"):
            probes.append(1)
            return httpx.Response(404, text="404 page not found")
        return httpx.Response(
            200, json={"status": "success", "data": {"resultType": "matrix", "result": []}}
        )

    store = mock_prometheus_store(handler)
    refs = stores.refs([make_target()])
    for _ in range(3):
        store.fleet_sum(refs, [KEY], END - timedelta(hours=1), END, 100)
    assert probes == [1]
