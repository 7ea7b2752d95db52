"""/api/v1/decisions/: CRUD, actions, revisions, export, permissions, schema."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from planner.decisions import services
from planner.decisions.models import DecisionRecord
from tests.decisions.conftest import OWNED, PASSING, THRESHOLDS, complete_decision, make_decision

BASE = "/api/v1/decisions/"


def _body(**extra):
    body = {
        "title": "Keep mp on the dedicated nodes",
        "pool_kind": "dedicated",
        "route": "A",
        "executor_backend": "mp",
        "verifiable_sentence": "Keep mp, because the platform reserves both nodes.",
        "responsibilities": [{"responsibility": k, **v} for k, v in OWNED.items()],
        "evidence": [{"measurement": k, "threshold": v} for k, v in THRESHOLDS.items()],
    }
    body.update(extra)
    return body


def test_create_retrieve_and_list(planner_api, viewer_api):
    created = planner_api.post(BASE, _body(), format="json")
    assert created.status_code == 201, created.json()
    data = created.json()
    assert data["label"] == "DR-0001"
    assert data["status"] == "proposed"
    assert data["version"] == 1
    assert [r["responsibility"] for r in data["responsibilities"]] == list(OWNED)
    assert data["responsibilities"][0]["guidance"].startswith("The existing platform")
    assert data["readiness"]["blocking"] == []
    assert len(data["readiness"]["open_evidence"]) == 6

    got = viewer_api.get(f"{BASE}1/")
    assert got.status_code == 200
    assert got.json()["title"] == "Keep mp on the dedicated nodes"
    listing = viewer_api.get(BASE, {"status": "proposed", "pool_kind": "dedicated"})
    assert listing.json()["count"] == 1


def test_create_from_plan(planner_api, s3_static_plan):
    response = planner_api.post(
        f"{BASE}from-plan/", {"plan": str(s3_static_plan.public_id)}, format="json"
    )

    assert response.status_code == 201
    rows = {r["responsibility"]: r for r in response.json()["responsibilities"]}
    assert rows["allocation"]["owner"] == "Ray placement group"
    assert response.json()["plan"] == str(s3_static_plan.public_id)


def test_update_with_version_then_accept_and_measure(planner_api):
    number = planner_api.post(BASE, _body(), format="json").json()["number"]
    patched = planner_api.patch(
        f"{BASE}{number}/",
        {
            "version": 1,
            "evidence": [{"measurement": k, "measured_value": v} for k, v in PASSING.items()],
        },
        format="json",
    )
    assert patched.status_code == 200, patched.json()
    assert patched.json()["version"] == 2

    accepted = planner_api.post(f"{BASE}{number}/accept/", {"version": 2}, format="json")
    assert accepted.status_code == 200
    assert accepted.json()["status"] == "accepted"

    measured = planner_api.post(
        f"{BASE}{number}/evidence/",
        {
            "measurement": "ttft_p95",
            "value": 0.9,
            "unit": "s",
            "origin": "monitoring",
            "window_start": "2026-11-30T08:00:00Z",
            "window_end": "2026-11-30T09:00:00Z",
        },
        format="json",
    )
    assert measured.status_code == 200, measured.json()
    assert measured.json()["measured_value"] == 900.0
    assert measured.json()["passed"] is False

    revisions = planner_api.get(f"{BASE}{number}/revisions/").json()
    assert [r["action"] for r in revisions] == ["evidence", "accepted", "edited", "created"]
    one = planner_api.get(f"{BASE}{number}/revisions/1/").json()
    assert one["snapshot"]["title"] == "Keep mp on the dedicated nodes"


def test_accept_refused_lists_what_is_missing(planner_api, planner):
    decision = make_decision(planner)

    response = planner_api.post(f"{BASE}{decision.number}/accept/", {}, format="json")

    assert response.status_code == 400
    assert "The verifiable sentence is missing." in response.json()["missing"]


def test_supersede_and_read_only(planner_api, planner):
    old = complete_decision(planner, measured=PASSING)
    services.decision_accept(decision=old, actor=planner)
    new = make_decision(planner, title="Adopt Ray")

    response = planner_api.post(
        f"{BASE}{old.number}/supersede/", {"superseded_by": new.number}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["superseded_by"] == new.number
    assert planner_api.get(f"{BASE}{new.number}/").json()["supersedes"] == [old.number]

    edit = planner_api.patch(
        f"{BASE}{old.number}/", {"title": "x", "version": response.json()["version"]}, format="json"
    )
    assert edit.status_code == 409
    assert "read-only" in edit.json()["detail"]


def test_export_is_markdown(viewer_api, planner):
    decision = complete_decision(planner)

    response = viewer_api.get(f"{BASE}{decision.number}/export/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown")
    assert response.content.decode().startswith("# DR-0001: ")


def test_records_are_never_deleted(admin_user, planner):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(admin_user)
    decision = make_decision(planner)

    assert client.delete(f"{BASE}{decision.number}/").status_code == 405
    assert DecisionRecord.objects.count() == 1


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("post", "", {"title": "x"}),
        ("patch", "{n}/", {"title": "x", "version": 1}),
        ("put", "{n}/", {"title": "x", "version": 1}),
        ("post", "{n}/accept/", {}),
        ("post", "{n}/reject/", {}),
        ("post", "{n}/evidence/", {"measurement": "ttft_p95", "value": 1, "unit": "ms"}),
        ("post", "from-plan/", {}),
    ],
)
def test_viewers_cannot_write_through_the_api(viewer_api, planner, method, suffix, body):
    decision = make_decision(planner)

    response = getattr(viewer_api, method)(
        BASE + suffix.format(n=decision.number), body, format="json"
    )

    assert response.status_code == 403
    assert DecisionRecord.objects.get().version == 1


def test_anonymous_gets_401(client):
    assert client.get(BASE).status_code == 401


def test_api_list_query_count_is_flat(viewer_api, planner):
    complete_decision(planner)

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert viewer_api.get(BASE).status_code == 200
        return len(ctx)

    one = count()
    for _ in range(4):
        complete_decision(planner)
    assert count() == one


def test_schema_documents_the_decision_operations(admin_client_):
    response = admin_client_.get("/api/v1/schema/?format=json")

    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/decisions/",
        "/api/v1/decisions/{number}/",
        "/api/v1/decisions/{number}/accept/",
        "/api/v1/decisions/{number}/supersede/",
        "/api/v1/decisions/{number}/revisions/",
        "/api/v1/decisions/{number}/revisions/{revision}/",
        "/api/v1/decisions/{number}/diff/",
        "/api/v1/decisions/{number}/export/",
        "/api/v1/decisions/{number}/evidence/",
        "/api/v1/decisions/from-plan/",
    ):
        assert path in paths, path
    assert "delete" not in paths["/api/v1/decisions/{number}/"]
