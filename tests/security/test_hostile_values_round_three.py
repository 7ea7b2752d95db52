"""Issue 33 items 3 and 7: odd input is a 400 naming the field, never a 500; decision authors
are deduplicated, capped and looked up in one query."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from planner.decisions.api.serializers import MAX_AUTHORS
from tests.inventory.factories import GpuTypeFactory, MachineFactory, PoolFactory

pytestmark = pytest.mark.django_db

DECISIONS = "/api/v1/decisions/"


def _send(client, method, url, body):
    """Send `body` as a hostile client does: lone surrogates as their \\ud800 escapes."""
    return getattr(client, method)(url, json.dumps(body), content_type="application/json")


@pytest.mark.parametrize("text", ["\ud800", "gpu\udfff", "\x00"])
@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/inventory/pools/", "kind"),  # a choice
        ("/api/v1/inventory/machines/", "gpu_type"),  # a related field
        ("/api/v1/inventory/machines/", "tags"),  # tags
        ("/api/v1/inventory/machines/", "pool"),
    ],
)
def test_a_lone_surrogate_or_nul_anywhere_is_a_400_naming_the_field(planner_api, url, field, text):
    GpuTypeFactory(a800=True)
    PoolFactory(name="prod")

    response = _send(planner_api, "post", url, {"name": "p", "hostname": "n-1", field: text})

    assert response.status_code == 400
    assert field in response.json()


def test_a_lone_surrogate_in_a_key_names_its_object(planner_api):
    response = _send(planner_api, "post", "/api/v1/inventory/pools/", {"meta": {"\ud800": 1}})

    assert response.status_code == 400
    assert "meta" in response.json()


@pytest.mark.parametrize("model", ["\ud800", {"slug": "qwen\udfff"}])
def test_evaluate_with_a_lone_surrogate_in_the_model_is_a_400(viewer_api, model):
    spec = {"model": model, "hardware": {"node_count": 1, "gpus_per_node": 8, "gpu": "h100-sxm"}}

    response = _send(viewer_api, "post", "/api/v1/plans/evaluate/", spec)

    assert response.status_code == 400
    assert any(key.startswith("model") for key in response.json())


def test_a_paired_surrogate_is_an_ordinary_character(planner_api):
    response = _send(planner_api, "post", "/api/v1/inventory/pools/", {"name": "pool \U0001f600"})

    assert response.status_code == 201
    assert response.json()["name"] == "pool \U0001f600"


@pytest.fixture
def decision(planner_api):
    created = planner_api.post(DECISIONS, {"title": "Keep mp"}, format="json")
    assert created.status_code == 201
    return created.json()


@pytest.mark.parametrize("field", ["responsibilities", "evidence"])
@pytest.mark.parametrize("rows", [[{}], [{}, {}]])
def test_patching_a_decision_with_empty_rows_is_a_400(planner_api, decision, field, rows):
    response = planner_api.patch(
        f"{DECISIONS}{decision['number']}/",
        {field: rows, "version": decision["version"]},
        format="json",
    )

    assert response.status_code == 400
    assert field in response.json()


def test_a_nul_author_is_a_400_naming_the_field(planner_api, decision):
    response = _send(
        planner_api,
        "patch",
        f"{DECISIONS}{decision['number']}/",
        {"authors": ["\u0000"], "version": decision["version"]},
    )

    assert response.status_code == 400
    assert any(key.startswith("authors") for key in response.json())


def test_authors_are_deduplicated_and_looked_up_in_one_query(planner_api, planner, decision):
    users = [
        get_user_model().objects.create_user(username=f"author-{i}", password="pw-x-123456")
        for i in range(10)
    ]
    names = [u.username for u in users] * 4 + [planner.username]

    with CaptureQueriesContext(connection) as queries:
        response = planner_api.patch(
            f"{DECISIONS}{decision['number']}/",
            {"authors": names, "version": decision["version"]},
            format="json",
        )

    assert response.status_code == 200, response.json()
    authors = response.json()["authors"]
    assert sorted(authors) == sorted({*(u.username for u in users), planner.username})
    lookups = [q for q in queries.captured_queries if '"username" IN' in q["sql"]]
    assert len(lookups) == 1


def test_too_many_authors_is_a_400_before_any_lookup(planner_api, decision):
    names = [f"user-{i}" for i in range(MAX_AUTHORS + 1)]

    with CaptureQueriesContext(connection) as queries:
        response = planner_api.patch(
            f"{DECISIONS}{decision['number']}/",
            {"authors": names, "version": decision["version"]},
            format="json",
        )

    assert response.status_code == 400
    assert f"At most {MAX_AUTHORS}" in response.json()["authors"][0]
    assert not [q for q in queries.captured_queries if '"username" IN' in q["sql"]]


def test_an_unknown_author_is_named(planner_api, decision):
    response = planner_api.patch(
        f"{DECISIONS}{decision['number']}/",
        {"authors": ["ghost-1", "ghost-2"], "version": decision["version"]},
        format="json",
    )

    assert response.status_code == 400
    assert "ghost-1" in response.json()["authors"][0]


def test_machines_accept_a_surrogate_free_tag(planner_api):
    machine = MachineFactory()

    response = planner_api.patch(
        f"/api/v1/inventory/machines/{machine.pk}/", {"tags": "gpu,prod"}, format="json"
    )

    assert response.status_code == 200
