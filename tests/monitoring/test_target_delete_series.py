"""Deleting a target deletes its series on a time-series server too, or says plainly that the
server kept them and how to delete them by hand (the API and the page alike)."""

from __future__ import annotations

from datetime import UTC, datetime
from unittest import mock
from urllib.parse import parse_qs

import httpx
import pytest

from monitoring import services, stores, tasks
from monitoring.models import Target
from monitoring.series import Forgotten, TargetRef, WriteBatch, WriteSample
from monitoring.series import remote_write as rw
from monitoring.stores.prometheus import PrometheusStore
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


# --- a poll that committed just before the delete ---------------------------------------------


class Server:
    """A mock time-series server that logs, in order, the target ids each write carried and
    the selector each delete named; `during_write` runs while the first write is under way."""

    def __init__(self) -> None:
        self.log: list[tuple[str, object]] = []
        self.during_write = None

    def handler(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/write":
            if self.during_write is not None:
                during, self.during_write = self.during_write, None
                during()
            ids = {labels[rw.TARGET_LABEL] for labels, _ in rw.decode(request.content)}
            self.log.append(("write", sorted(ids)))
        else:
            self.log.append(("delete", parse_qs(request.content.decode())["match[]"][0]))
        return httpx.Response(204)


@pytest.fixture
def server(monkeypatch) -> Server:
    mocked = Server()
    store = RoutingStore(mock_prometheus_store(mocked.handler), None)
    monkeypatch.setattr(stores, "current", lambda: store)
    return mocked


def _poll_of(target) -> WriteBatch:
    return WriteBatch(
        target=stores.ref(target),
        ts=datetime(2026, 12, 1, tzinfo=UTC),
        samples=(WriteSample("vllm.requests_running", (), 1.0),),
    )


def _selector(target) -> str:
    return f'{{job="serveplan",serveplan_target="{target.pk}"}}'


def test_a_write_under_way_at_the_delete_is_deleted_again_after_it(
    server, make_target, django_capture_on_commit_callbacks
):
    """The order the server sees: the delete, the one request that had left before it (its
    poll committed first), then the second delete, queued with a countdown longer than that
    request may take."""
    target = make_target()
    selector, target_id = _selector(target), str(target.pk)
    store: PrometheusStore = stores.current().polled
    server.during_write = lambda: services.target_delete(target=target)
    with (
        mock.patch.object(tasks.forget_series, "apply_async") as queued,
        django_capture_on_commit_callbacks(execute=True),
    ):
        store.buffer.add(_poll_of(target))  # the poll committed: its send is next

        store.flush()

    assert server.log == [("delete", selector), ("write", [target_id])]
    (call,) = queued.call_args_list
    assert call.kwargs["countdown"] == store.forget_again_s
    assert store.forget_again_s > 4 * store.timeout_s  # pool wait, connect, write, read
    tasks.forget_series.apply(kwargs=call.kwargs["kwargs"])  # as a worker, after the countdown
    assert server.log == [("delete", selector), ("write", [target_id]), ("delete", selector)]


def test_a_send_after_the_delete_leaves_the_deleted_targets_samples_out(server, make_target):
    gone, kept = make_target(), make_target()
    selector = _selector(gone)
    store: PrometheusStore = stores.current().polled
    store.buffer.add(_poll_of(gone))  # committed before the delete, not sent yet
    store.buffer.add(_poll_of(kept))
    services.target_delete(target=gone)

    assert store.flush()

    assert server.log == [("delete", selector), ("write", [str(kept.pk)])]
    report = store.write_report()
    assert (report.written, report.dropped, report.target_deleted) == (1, 0, 1)


def test_only_the_poll_of_a_deleted_target_sends_nothing(server, make_target):
    gone = make_target()
    selector = _selector(gone)
    store: PrometheusStore = stores.current().polled
    store.buffer.add(_poll_of(gone))
    services.target_delete(target=gone)

    assert store.flush()

    assert server.log == [("delete", selector)]  # no request at all


def test_the_second_delete_never_touches_a_target_that_exists(server, make_target):
    target = make_target()
    tasks.forget_series.apply(kwargs={"target_id": target.pk, "name": "t", "kind": "vllm"})
    assert server.log == []


def test_the_embedded_store_deletes_once(make_target, settings, django_capture_on_commit_callbacks):
    settings.MONITORING_SERIES_STORE = stores.EMBEDDED
    target = make_target()
    with (
        mock.patch.object(tasks.forget_series, "apply_async") as queued,
        django_capture_on_commit_callbacks(execute=True),
    ):
        report = services.target_delete(target=target)
    assert (report.outcome, report.again_after_s) == (Forgotten.DELETED, None)
    assert not queued.called  # its rows went with the target, in the same transaction


def test_a_broker_that_is_down_does_not_fail_the_delete(
    server, make_target, caplog, django_capture_on_commit_callbacks
):
    target = make_target()
    with (
        mock.patch.object(
            tasks.forget_series, "apply_async", side_effect=ConnectionError("broker down")
        ),
        django_capture_on_commit_callbacks(execute=True),
    ):
        report = services.target_delete(target=target)
    assert report.outcome is Forgotten.DELETED
    assert not Target.objects.filter(pk=target.pk).exists()
    assert "second delete" in caplog.text


def test_the_django_admin_deletes_targets_as_everywhere_else(
    make_target, admin_client_, monkeypatch
):
    from monitoring import admin

    deleted = []
    real = admin.target_delete
    monkeypatch.setattr(
        admin, "target_delete", lambda *, target: deleted.append(target.pk) or real(target=target)
    )
    one, two, three = make_target(), make_target(), make_target()

    page = admin_client_.post(f"/admin/monitoring/target/{one.pk}/delete/", {"post": "yes"})
    assert page.status_code == 302
    action = admin_client_.post(
        "/admin/monitoring/target/",
        {"action": "delete_selected", "_selected_action": [two.pk, three.pk], "post": "yes"},
    )
    assert action.status_code == 302

    assert sorted(deleted) == sorted([one.pk, two.pk, three.pk])
    assert not Target.objects.filter(pk__in=[one.pk, two.pk, three.pk]).exists()


def test_a_polled_target_made_read_only_then_deleted_leaves_no_series(
    server, make_target, planner_api, django_capture_on_commit_callbacks
):
    """Its polls wrote series under its id; as a read-only target it reads Prometheus, but
    those series are still ServePlan's to delete (issue 33, item 10)."""
    target = make_target()
    store: PrometheusStore = stores.current().polled
    store.buffer.add(_poll_of(target))
    assert store.flush()
    # Made read-only (as target_update does once a Prometheus and its job are allowed).
    Target.objects.filter(pk=target.pk).update(base_url="", selector='{job="vllm"}')

    with (
        mock.patch.object(tasks.forget_series, "apply_async") as queued,
        django_capture_on_commit_callbacks(execute=True),
    ):
        answer = planner_api.delete(f"/api/v1/monitoring/targets/{target.pk}/")

    assert answer.status_code == 204
    assert server.log == [("write", [str(target.pk)]), ("delete", _selector(target))]
    assert queued.called  # and once more after a write under way may have arrived
