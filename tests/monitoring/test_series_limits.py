"""What one series request may cost: parsed series of known keys (400 otherwise, never a 500),
series x points bounded, a per-user rate, and read-only rates that look back a bounded window
(issue 33: items 6 and 7)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs

import httpx
import pytest

from monitoring.scrape.keys import SERIES
from monitoring.series import SeriesMatch, TargetRef
from monitoring.series.readonly.reader import ReadOnlyReader
from tests.monitoring.factories import mock_prometheus_store

pytestmark = pytest.mark.django_db


def _series_url(target) -> str:
    return f"/api/v1/monitoring/targets/{target.pk}/series/"


@pytest.mark.parametrize(
    "series",
    ["a{", "poll.up{", 'poll.up{x="1"', "poll.up{x}", "poll.up{x=}", 'poll.up{x="1"y="2"}', "x"],
)
def test_a_malformed_or_unknown_series_is_a_400(viewer_api, make_target, series):
    answer = viewer_api.get(_series_url(make_target()), {"series": series})

    assert answer.status_code == 400
    assert "series" in answer.json()


@pytest.mark.parametrize("series", ["99999999999999999999", "a{", 'poll.up{job="x"}'])
def test_fleet_series_refuse_what_is_not_a_key(viewer_api, make_target, series):
    make_target()
    answer = viewer_api.get("/api/v1/monitoring/fleet-series/", {"series": series})

    assert answer.status_code == 400
    assert "series" in answer.json()


def test_series_times_points_is_bounded_naming_max_points(viewer_api, make_target, settings):
    target = make_target()
    keys = [s.key for s in SERIES if s.key.startswith("gpu.")][:25]

    heavy = viewer_api.get(
        _series_url(target), {"series": ",".join(keys), "range": "7d", "max_points": 5000}
    )
    dashboard = viewer_api.get(_series_url(target), {"series": ",".join(keys), "range": "7d"})

    assert heavy.status_code == 400
    assert "points per request" in heavy.json()["max_points"][0]
    assert dashboard.status_code == 200
    settings.MONITORING_SERIES_MAX_POINTS_PER_REQUEST = 1000
    assert viewer_api.get(_series_url(target), {"series": "poll.up,poll.missed"}).status_code == 400


def test_the_series_api_is_rate_limited_per_user(viewer_api, planner_api, make_target, settings):
    settings.MONITORING_SERIES_RATE = "3/min"
    target = make_target()
    asks = [viewer_api.get(_series_url(target), {"series": "poll.up"}) for _ in range(3)]
    fleet = viewer_api.get("/api/v1/monitoring/fleet-series/", {"series": "poll.up"})

    assert [a.status_code for a in asks] == [200, 200, 200]
    assert fleet.status_code == 429
    assert "Retry-After" in fleet
    assert planner_api.get(_series_url(target), {"series": "poll.up"}).status_code == 200


def _reader(asked: list[str], **kwargs) -> ReadOnlyReader:
    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(parse_qs(request.content.decode() or request.url.query.decode())["query"][0])
        data = {"resultType": "matrix", "result": []}
        return httpx.Response(200, json={"status": "success", "data": data})

    return ReadOnlyReader(mock_prometheus_store(handler), **kwargs)


@pytest.mark.parametrize(("points", "window_ms"), [(1000, 300_000), (10, 300_000), (5000, 120_960)])
def test_a_long_read_only_range_looks_back_a_bounded_window(points, window_ms):
    """Was the whole step: 605 s at 1,000 points over 7 days, 16.8 h at 10."""
    asked: list[str] = []
    reader = _reader(asked)
    target = TargetRef(id=1, name="w", kind="vllm", interval_s=15, selector='{job="vllm"}')
    end = datetime(2026, 12, 1, tzinfo=UTC)

    reader.range(
        [target], [SeriesMatch("vllm.requests_per_s")], end - timedelta(days=7), end, points
    )

    windows = {int(w) for w in re.findall(r"\[(\d+)ms\]", asked[0])}
    assert windows == {window_ms}


def test_the_window_never_goes_below_four_scrape_intervals():
    reader = _reader([], rate_window_max_s=60)
    slow = TargetRef(id=1, name="w", kind="vllm", interval_s=60, selector='{job="vllm"}')
    assert reader.rate_window_ms(slow, step_ms=3_600_000) == 240_000
