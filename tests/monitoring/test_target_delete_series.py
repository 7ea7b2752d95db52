"""Deleting a target deletes its series on a time-series server too, or says plainly that the
server kept them and how to delete them by hand (the API and the page alike)."""

from __future__ import annotations

import httpx
import pytest

from monitoring import stores
from monitoring.models import Target
from monitoring.series import Forgotten, TargetRef
from monitoring.stores.routing import RoutingStore
from tests.monitoring.factories import mock_prometheus_store

pytestmark = pytest.mark.django_db


def _ref(target_id: int) -> TargetRef:
    return TargetRef(id=target_id, name="t", kind="vllm", interval_s=15)


ADMIN_OFF = {"status": "error", "errorType": "unavailable", "error": "admin APIs disabled"}


def test_the_server_is_asked_to_delete_exactly_the_targets_series():
    asked = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append((request.url.path, request.content.decode()))
        return httpx.Response(204)

    report = mock_prometheus_store(handler).forget(
        TargetRef(id=42, name="t", kind="vllm", interval_s=15)
    )

    assert report.outcome is Forgotten.DELETED
    assert asked == [
        (
            "/api/v1/admin/tsdb/delete_series",
            "match%5B%5D=%7Bjob%3D%22serveplan%22%2Cserveplan_target%3D%2242%22%7D",
        )
    ]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (httpx.Response(503, json=ADMIN_OFF), "HTTP 503"),
        (httpx.Response(404, text="404 page not found"), "HTTP 404: 404 page not found"),
    ],
)
def test_a_server_that_refuses_keeps_them_and_the_report_says_how_to_delete(answer, reason):
    report = mock_prometheus_store(lambda request: answer).forget(
        TargetRef(id=7, name="t", kind="vllm", interval_s=15)
    )
    assert report.outcome is Forgotten.KEPT
    assert report.reason.startswith(reason)
    assert report.selector == '{job="serveplan",serveplan_target="7"}'


def test_an_unreachable_server_keeps_them_too():
    def handler(request):
        raise httpx.ConnectError("refused")

    report = mock_prometheus_store(handler).forget(
        TargetRef(id=7, name="t", kind="vllm", interval_s=15)
    )
    assert (report.outcome, report.reason) == (Forgotten.KEPT, "ConnectError")


@pytest.fixture
def admin_api_off(monkeypatch):
    store = RoutingStore(
        mock_prometheus_store(lambda request: httpx.Response(503, json=ADMIN_OFF)), None
    )
    monkeypatch.setattr(stores, "current", lambda: store)


def test_the_api_answers_200_with_the_kept_series(admin_api_off, make_target, planner_api):
    target = make_target()
    response = planner_api.delete(f"/api/v1/monitoring/targets/{target.pk}/")
    assert response.status_code == 200
    assert response.json() == {
        "outcome": "kept",
        "reason": response.json()["reason"],
        "selector": f'{{job="serveplan",serveplan_target="{target.pk}"}}',
    }
    assert "admin APIs disabled" in response.json()["reason"]
    assert not Target.objects.filter(pk=target.pk).exists()


def test_the_page_warns_and_names_the_selector(admin_api_off, make_target, planner_client):
    target = make_target()
    page = planner_client.get(f"/monitoring/targets/{target.pk}/delete/")
    assert "time-series server are deleted too" in page.content.decode()

    response = planner_client.post(
        f"/monitoring/targets/{target.pk}/delete/", {"action": "delete"}, follow=True
    )

    text = response.content.decode()
    assert "kept its series" in text
    assert f"serveplan_target=&quot;{target.pk}&quot;" in text
