"""The Ray page's per-GPU heatmaps end to end: real-labelled payloads from two nodes, stored
through the poller's path, read back as the last-poll grid, the history and the page.

The payloads are the real H200 worker's lines (tests/monitoring/fixtures/ray/SOURCES.md) with
readings put in, as in tests/monitoring/scrape/test_scrape_ray_gpu.py.
"""

from __future__ import annotations

import time

import pytest

from monitoring import selectors
from monitoring.polling.run import to_datetime
from monitoring.scrape import ray as ray_extract
from monitoring.services import PollOutcome, poll_record_success
from tests.inventory.factories import MachineFactory
from tests.monitoring.scrape.test_scrape_ray_gpu import payload

pytestmark = pytest.mark.django_db

A, B = "10.50.188.220:8080", "10.50.188.221:8080"


def store_poll(target, ts: float, util_a: tuple[float, float], util_b: tuple[float, float]):
    parts = [
        ray_extract.extract(
            payload({"ray_node_gpus_utilization": util_a, "ray_node_gram_used": (70e3, 10.0)}),
            ts,
            node=A,
        ),
        ray_extract.extract(
            payload({"ray_node_gpus_utilization": util_b}, ip="10.50.188.221"), ts, node=B
        ),
    ]
    merged = ray_extract.merge(parts, ts)
    poll_record_success(
        target=target,
        ts=to_datetime(ts),
        outcome=PollOutcome(samples=merged.gauges, snapshot=None, info=merged.info),
    )
    target.refresh_from_db()


@pytest.fixture
def ray_target(make_target):
    machines = [
        MachineFactory(hostname="h200-a", management_address="10.50.188.220", nics=[]),
        MachineFactory(hostname="h200-b", management_address="10.50.188.221", nics=[]),
    ]
    return make_target(kind="ray", base_url="http://127.0.0.1:9/ray", machines=machines)


def test_last_poll_grid_names_hosts_and_shows_a_failed_reading_as_a_gap(ray_target):
    store_poll(ray_target, time.time(), (-1.0, 0.0), (30.0, 100.0))

    state = selectors.ray_state(ray_target)

    assert [n["name"] for n in state["nodes"]] == ["h200-a", "h200-b"]
    assert state["gpu_ids"] == ["0", "1"]
    # GPU 0 of h200-a answered -1: no value (a gap), while GPU 1's idle 0 % is a value.
    assert state["gpu_utilization_pct"] == [[None, 0.0], [30.0, 100.0]]
    assert state["gpu_memory_used_mib"] == [[70e3, 10.0], [None, None]]
    assert state["gpu_names"][A] == {"0": "NVIDIA H200", "1": "NVIDIA H200"}
    assert [n["gpu_count"] for n in state["nodes"]] == [2, 2]


def test_history_has_a_row_per_node_and_gpu_with_the_missing_poll_left_out(ray_target, viewer_api):
    now = time.time()
    store_poll(ray_target, now - 30, (10.0, 20.0), (30.0, 40.0))
    store_poll(ray_target, now - 15, (-1.0, 25.0), (35.0, 45.0))
    store_poll(ray_target, now, (12.0, 22.0), (32.0, 42.0))

    body = viewer_api.get(
        f"/api/v1/monitoring/targets/{ray_target.pk}/series/",
        {"series": "ray.node.gpu_utilization_pct", "range": "15m"},
    ).json()

    rows = {(s["labels"]["node"], s["labels"]["gpu"]): s for s in body["series"]}
    assert set(rows) == {(A, "0"), (A, "1"), (B, "0"), (B, "1")}
    assert [v for v in rows[(A, "1")]["v"] if v is not None] == [20.0, 25.0, 22.0]
    # The failed reading is not stored as 0: the row has one point fewer (or a null there).
    assert [v for v in rows[(A, "0")]["v"] if v is not None] == [10.0, 12.0]


def test_the_ray_page_draws_the_last_poll_and_the_history_heatmaps(ray_target, viewer_client):
    store_poll(ray_target, time.time(), (50.0, 0.0), (30.0, 100.0))

    html = viewer_client.get(ray_target.get_absolute_url()).content.decode()

    # dashboard.js draws both on the sequential scale, light at 0, capped at 100 for "%".
    wanted = (
        'id="chart-gpu-heatmap"',
        'data-chart="heatmap"',
        'data-field="gpu_utilization_pct"',
        'id="chart-ray-gpu-history"',
        'data-chart="timeheat"',
        'data-series="ray.node.gpu_utilization_pct"',
    )
    assert [w for w in wanted if w not in html] == []
