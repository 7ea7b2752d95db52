"""The plan-comparison API's contract, and targets linked to plans by the plan's public_id."""

from __future__ import annotations

import pytest

from monitoring.models import Target
from tests.monitoring.simulated import feed_simulated
from tests.monitoring.test_plan_comparison import _replica, s1_plan  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

ROW_KEYS = {
    "quantity",
    "label",
    "unit",
    "planned",
    "observed",
    "deviation_pct",
    "within_tolerance",
    "tolerance_pct",
    "note",
}


def test_the_schema_documents_the_comparison():
    from django.urls import include, path
    from drf_spectacular.generators import SchemaGenerator

    patterns = [path("api/v1/monitoring/", include("monitoring.api_urls"))]
    schema = SchemaGenerator(patterns=patterns).get_schema(request=None, public=True)

    operation = schema["paths"]["/api/v1/monitoring/targets/{id}/plan-comparison/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"id", "window", "scope"}
    body = schema["components"]["schemas"]["PlanComparison"]
    assert set(body["required"]) >= {"plan", "scope", "warnings", "rows"}
    row = schema["components"]["schemas"]["ComparisonRow"]["properties"]
    assert set(row) >= ROW_KEYS - {"label", "note", "tolerance_pct"}


def test_a_target_links_to_a_plan_by_its_public_id(planner_api, s1_plan):  # noqa: F811
    plan_id = planner_api.get(f"/api/v1/plans/{s1_plan.public_id}/").json()["public_id"]

    response = planner_api.post(
        "/api/v1/monitoring/targets/",
        {
            "name": "s1-a",
            "kind": "vllm",
            "base_url": "http://127.0.0.1:9/a",
            "plan": plan_id,
            "plan_scope": "replica",
        },
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["plan"] == str(s1_plan.public_id)
    assert Target.objects.get(name="s1-a").plan == s1_plan


def test_an_unknown_plan_id_is_refused_with_the_field_named(planner_api):
    response = planner_api.post(
        "/api/v1/monitoring/targets/",
        {"name": "x", "kind": "vllm", "base_url": "http://127.0.0.1:9/x", "plan": "12"},
        format="json",
    )
    assert response.status_code == 400
    assert "plan" in response.json()


def test_the_comparison_answers_the_contract(viewer_api, make_target, s1_plan):  # noqa: F811
    target = make_target(name="s1-a", plan=s1_plan)
    feed_simulated(target, _replica("a", blocks=90_000, model="Qwen/Qwen2.5-32B-Instruct"))

    response = viewer_api.get(f"/api/v1/monitoring/targets/{target.pk}/plan-comparison/?window=1h")

    assert response.status_code == 200
    body = response.json()
    assert body["plan"]["public_id"] == str(s1_plan.public_id)
    assert body["scope"] == "replica"
    assert {"code": "model_mismatch"}.items() <= body["warnings"][0].items()
    assert all({"code", "message"} <= set(w) for w in body["warnings"])
    rows = {r["quantity"]: r for r in body["rows"]}
    assert all(set(r) == ROW_KEYS for r in body["rows"])
    kv = rows["kv_blocks"]
    assert kv["unit"] == "blocks"
    assert kv["observed"] == 90_000
    assert kv["deviation_pct"] == pytest.approx(
        100 * (90_000 - kv["planned"]) / kv["planned"], abs=0.1
    )
    assert isinstance(kv["within_tolerance"], bool)

    whole = viewer_api.get(
        f"/api/v1/monitoring/targets/{target.pk}/plan-comparison/?window=1h&scope=plan"
    ).json()
    assert whole["scope"] == "plan"
    assert "replicas" in {r["quantity"] for r in whole["rows"]}


def test_bad_parameters_and_unlinked_targets_get_clear_errors(viewer_api, make_target):
    target = make_target()
    url = f"/api/v1/monitoring/targets/{target.pk}/plan-comparison/"

    bad = viewer_api.get(url + "?window=3y")
    assert bad.status_code == 400
    assert "window" in bad.json()
    assert viewer_api.get(url + "?scope=cluster").status_code == 400
    unlinked = viewer_api.get(url)
    assert unlinked.status_code == 404
    assert "not linked" in unlinked.json()["detail"]


def test_a_target_links_to_a_decision_by_its_number(planner_api, planner):
    from planner.decisions.services import decision_create

    decision = decision_create(actor=planner, title="llama on a800")
    number = planner_api.get(f"/api/v1/decisions/{decision.number}/").json()["number"]

    response = planner_api.post(
        "/api/v1/monitoring/targets/",
        {"name": "d", "kind": "vllm", "base_url": "http://127.0.0.1:9/d", "decision": number},
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["decision"] == decision.number
    assert Target.objects.get(name="d").decision == decision


def test_the_comparison_loads_the_plan_with_the_target(viewer_api, make_target, s1_plan):  # noqa: F811
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    target = make_target(name="s1-a", plan=s1_plan)
    feed_simulated(target, _replica("a", blocks=90_000))
    url = f"/api/v1/monitoring/targets/{target.pk}/plan-comparison/"

    with CaptureQueriesContext(connection) as queries:
        assert viewer_api.get(url).status_code == 200

    # Joined to the target's row: no second trip per deferred JSON field of the plan.
    assert not [q for q in queries.captured_queries if 'FROM "planner_plan"' in q["sql"]]
