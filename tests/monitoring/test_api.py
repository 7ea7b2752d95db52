"""The monitoring API: schema, series, state, events, alert rules."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from monitoring.models import AlertEvent, AlertRule
from monitoring.tasks import fleet_tick_record
from tests.monitoring.factories import mark_up, write_series

pytestmark = pytest.mark.django_db


def test_the_schema_documents_the_monitoring_routes():
    from django.urls import include, path
    from drf_spectacular.generators import SchemaGenerator

    # Only our routes: the whole schema is tested by the lead's suite.
    patterns = [path("api/v1/monitoring/", include("monitoring.api_urls"))]
    schema = SchemaGenerator(patterns=patterns).get_schema(request=None, public=True)

    paths = schema["paths"]
    for route in (
        "/api/v1/monitoring/targets/",
        "/api/v1/monitoring/targets/{id}/series/",
        "/api/v1/monitoring/targets/{id}/state/",
        "/api/v1/monitoring/overview/",
        "/api/v1/monitoring/fleet-series/",
        "/api/v1/monitoring/events/",
        "/api/v1/monitoring/alert-rules/",
    ):
        assert route in paths, route


def test_the_series_endpoint_returns_points_per_series(viewer_api, make_target):
    target = make_target()
    now = timezone.now()
    write_series(
        target,
        "vllm.requests_running",
        start=now.replace(microsecond=0) - timezone.timedelta(minutes=10),
        step_s=15,
        count=40,
    )

    response = viewer_api.get(
        f"/api/v1/monitoring/targets/{target.pk}/series/",
        {"series": "vllm.requests_running,vllm.requests_waiting", "range": "15m"},
    )

    assert response.status_code == 200
    body = response.json()
    (series,) = body["series"]
    assert series["key"] == "vllm.requests_running"
    assert len(series["t"]) == len(series["v"]) == 40
    assert body["source"] == "raw"
    assert body["start"] < series["t"][0] <= series["t"][-1] <= body["end"]


@pytest.mark.parametrize(
    "params", [{"series": "x", "range": "3y"}, {"range": "1h"}], ids=["bad-range", "no-series"]
)
def test_the_series_endpoint_explains_bad_parameters(viewer_api, make_target, params):
    target = make_target()

    response = viewer_api.get(f"/api/v1/monitoring/targets/{target.pk}/series/", params)

    assert response.status_code == 400


def test_the_state_endpoint_lists_open_events(viewer_api, make_target):
    target = make_target()
    rule = AlertRule.objects.filter(target=target).first()
    AlertEvent.objects.create(
        rule=rule, target=target, opened_at=timezone.now(), value=1, last_value=1, message="m"
    )

    body = viewer_api.get(f"/api/v1/monitoring/targets/{target.pk}/state/").json()

    assert body["state"] == "never"
    assert [e["rule_name"] for e in body["open_events"]] == [rule.name]


def test_events_filter_by_open(viewer_api, make_target):
    target = make_target()
    rule = AlertRule.objects.filter(target=target).first()
    now = timezone.now()
    AlertEvent.objects.create(
        rule=rule, target=target, opened_at=now, value=1, last_value=1, message="open"
    )
    other = AlertRule.objects.filter(target=target).last()
    AlertEvent.objects.create(
        rule=other,
        target=target,
        opened_at=now,
        resolved_at=now,
        value=1,
        last_value=0,
        message="done",
    )

    body = viewer_api.get("/api/v1/monitoring/events/", {"open": "true"}).json()

    assert [e["message"] for e in body["results"]] == ["open"]


def test_a_planner_creates_an_alert_rule_for_all_targets(planner_api):
    response = planner_api.post(
        "/api/v1/monitoring/alert-rules/",
        {"name": "5xx", "series": "vllm.http_errors_per_s", "comparison": "gt", "threshold": 0.1},
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["target"] is None


def test_pages_render(viewer_client, make_target):
    vllm, ray = make_target(), make_target(kind="ray")
    started = time.monotonic()

    for url in (
        "/monitoring/",
        "/monitoring/overview/tiles/",
        "/monitoring/targets/",
        "/monitoring/events/",
        vllm.get_absolute_url(),
        ray.get_absolute_url(),
        f"/monitoring/targets/{vllm.pk}/panels/",
        f"/monitoring/targets/{ray.pk}/panels/",
    ):
        response = viewer_client.get(url)
        assert response.status_code == 200, url
        assert b"<script>" not in response.content  # the CSP forbids inline scripts
    assert time.monotonic() - started < 10


def test_every_chart_has_a_title_a_unit_and_an_empty_state(viewer_client, make_target):
    import re

    for target in (make_target(), make_target(kind="ray")):
        html = viewer_client.get(target.get_absolute_url()).content.decode()
        charts = re.findall(r"<figure[^>]*data-chart=[^>]*>", html)
        assert len(charts) >= 8
        for tag in charts:
            for attribute in ("data-title", "data-unit", "data-empty"):
                assert re.search(attribute + r'="[^"]+"', tag), (attribute, tag)


def test_an_unlinked_target_explains_the_empty_plan_panel(viewer_client, make_target):
    response = viewer_client.get(make_target().get_absolute_url())

    assert b"not linked to a plan" in response.content


def test_fleet_sums_are_computed_once_per_cache_window(viewer_api, make_target, settings):
    settings.MONITORING_FLEET_SERIES_CACHE_S = 60
    now = timezone.now().replace(microsecond=0)
    for target in (make_target(), make_target()):
        mark_up(target, now, {"vllm.requests_running": 2.0})
    fleet_tick_record(now=now - timezone.timedelta(seconds=10))
    query = {"series": "vllm.requests_running", "range": "15m"}

    first = viewer_api.get("/api/v1/monitoring/fleet-series/", query).json()
    mark_up(make_target(), now, {"vllm.requests_running": 2.0})
    fleet_tick_record(now=now - timezone.timedelta(seconds=5))
    cached = viewer_api.get("/api/v1/monitoring/fleet-series/", query).json()

    assert first["series"][0]["v"][0] == 4.0
    assert cached == first  # the third target shows up when the window ends, not before


def test_fleet_sums_of_several_keys_cost_the_queries_of_one(viewer_api, make_target, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.MONITORING_FLEET_SERIES_CACHE_S = 0
    now = timezone.now().replace(microsecond=0)
    for target in (make_target(), make_target()):
        mark_up(target, now, {"vllm.requests_running": 2.0, "vllm.requests_waiting": 3.0})
    for i in range(10):
        fleet_tick_record(now=now - timezone.timedelta(seconds=15 * (i + 1)))

    def fleet(series: str) -> tuple[dict, int]:
        with CaptureQueriesContext(connection) as queries:
            body = viewer_api.get(
                "/api/v1/monitoring/fleet-series/", {"series": series, "range": "15m"}
            ).json()
        return body, len(queries)

    one, one_queries = fleet("vllm.requests_running")
    three, three_queries = fleet(
        "vllm.requests_waiting,vllm.requests_running,vllm.prompt_tokens_per_s"
    )

    assert three_queries == one_queries
    by_key = {s["key"]: s for s in three["series"]}
    assert [s["key"] for s in three["series"]] == [
        "vllm.requests_waiting",
        "vllm.requests_running",
        "vllm.prompt_tokens_per_s",
    ]
    assert set(by_key["vllm.requests_waiting"]["v"]) == {6.0}  # 3 + 3, each bucket
    assert set(one["series"][0]["v"]) == set(by_key["vllm.requests_running"]["v"]) == {4.0}
    assert by_key["vllm.prompt_tokens_per_s"]["t"] == []


def test_the_gpu_memory_chart_draws_the_targets_own_alert_threshold(viewer_client, make_target):
    from monitoring.targets.kinds import GPU_MEMORY_FULL_PCT

    target = make_target(kind="gpu", base_url="http://127.0.0.1:9/gpu")
    rule = AlertRule.objects.get(target=target, series="gpu.memory_used_pct")

    def memory_lines() -> list[float]:
        charts = viewer_client.get(target.get_absolute_url()).context["charts"]
        return [line.y for line in next(c for c in charts if c.id == "chart-gpu-memory").lines]

    assert memory_lines() == [GPU_MEMORY_FULL_PCT]  # the default rule
    AlertRule.objects.filter(pk=rule.pk).update(threshold=88.0)
    assert memory_lines() == [88.0]  # an edited rule moves the line
    AlertRule.objects.filter(pk=rule.pk).update(enabled=False)
    assert memory_lines() == []  # no rule, no line
