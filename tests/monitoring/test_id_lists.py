"""Lists of ids in API bodies: each id counts once, the list is bounded (400 naming the field)
and read in one query (issue 33, item 3: calibration targets and a target's machines)."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitoring.models import Target
from tests.inventory.factories import MachineFactory
from tests.monitoring.test_plan_comparison import _replica, s1_plan, two_replicas  # noqa: F401

pytestmark = pytest.mark.django_db

PROFILES = "/api/v1/monitoring/calibration-profiles/"


def test_a_target_repeated_is_fitted_once(two_replicas, planner_api):  # noqa: F811
    a, b = two_replicas
    once = planner_api.post(PROFILES, {"targets": [a.pk, b.pk]}, format="json").json()

    again = planner_api.post(PROFILES, {"targets": [a.pk, b.pk] * 40}, format="json")

    assert again.status_code == 201, again.json()
    assert again.json()["observations"] == once["observations"]
    assert [s["target"] for s in again.json()["sources"]] == [s["target"] for s in once["sources"]]


def test_the_targets_list_is_bounded(two_replicas, planner_api, settings):  # noqa: F811
    settings.MONITORING_CALIBRATION_MAX_TARGETS = 10
    a, _b = two_replicas

    answer = planner_api.post(PROFILES, {"targets": [a.pk] * 11}, format="json")

    assert answer.status_code == 400
    assert "At most 10 ids" in answer.json()["targets"][0]


@pytest.mark.parametrize(
    "ids",
    ["[99999999999999999999]", '["\\ud800"]', "[{}]", "[true]", '"1"', "[-1]", "[0]", '["1e3"]'],
)
def test_an_id_that_names_nothing_is_a_400(planner_api, make_target, ids):
    make_target()
    answer = planner_api.post(PROFILES, '{"targets": ' + ids + "}", content_type="application/json")

    assert answer.status_code == 400
    assert any(key.startswith("targets") for key in answer.json())


def test_a_targets_machines_are_read_in_one_query(planner_api, settings):
    machines = MachineFactory.create_batch(30)
    ids = [m.pk for m in machines]
    body = {"name": "t", "kind": "vllm", "base_url": "http://127.0.0.1:8000", "machines": ids * 3}

    with CaptureQueriesContext(connection) as queries:
        answer = planner_api.post("/api/v1/monitoring/targets/", body, format="json")

    assert answer.status_code == 201, answer.json()
    assert sorted(answer.json()["machines"]) == sorted(ids)
    # The ids are looked up in one query (DRF's related field made one per id).
    sql = [q["sql"] for q in queries.captured_queries]
    assert sum('"inventory_machine"."id" IN (' in q for q in sql) == 1
    assert not [q for q in sql if re.search(r'"inventory_machine"\."id" = \d', q)]
    settings.API_MAX_IDS_PER_LIST = 50
    body = {**body, "name": "u"}
    refused = planner_api.post("/api/v1/monitoring/targets/", body, format="json")
    assert refused.status_code == 400
    assert "At most 50 ids" in refused.json()["machines"][0]
    assert not Target.objects.filter(name="u").exists()
