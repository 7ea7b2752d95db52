"""The Prometheus store reads the whole fleet's sums from the fleet series the scheduler writes
(one series per key), and sums the targets' own series only for a subset or before the first
tick."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs

import httpx
import pytest

from monitoring import stores
from monitoring.series.buffer import RetryBuffer
from monitoring.stores.prometheus import PrometheusStore

pytestmark = pytest.mark.django_db

END = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
KEY = "vllm.requests_running"


def _store(answer_fleet: bool):
    asked = []

    def handler(request: httpx.Request) -> httpx.Response:
        query = parse_qs(request.content.decode())["query"][0]
        asked.append(query)
        values = [[END.timestamp(), "7"]] if answer_fleet or 'target="0"' not in query else []
        result = [{"metric": {}, "values": values}] if values else []
        return httpx.Response(
            200, json={"status": "success", "data": {"resultType": "matrix", "result": result}}
        )

    store = PrometheusStore(
        query_url="http://127.0.0.1:9090",
        write_url="http://127.0.0.1:9090/api/v1/write",
        buffer=RetryBuffer(max_samples=10),
        client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
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
