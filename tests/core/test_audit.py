"""The audit log lists who changed what across every tracked model; admins only."""

import csv
import io

import pytest

from inventory.services import pool_create, pool_update

pytestmark = pytest.mark.django_db


@pytest.fixture
def changed_pool(planner):
    pool = pool_create(actor=planner, name="train-pool", kind="dedicated", description="")
    pool_update(pool=pool, actor=planner, description="moved to rack 7")
    return pool


def test_admin_sees_who_created_and_changed_a_pool(admin_client_, changed_pool, planner):
    response = admin_client_.get("/audit/", {"source": "inventory.pool"})

    rows = response.context["rows"]
    assert [r["history_type"] for r in rows] == ["~", "+"]
    assert {r["user"] for r in rows} == {planner.username}
    assert all(r["audit_label"] == "train-pool" for r in rows)


def test_filters_by_user_and_action(admin_client_, changed_pool, planner):
    response = admin_client_.get("/audit/", {"user": planner.username, "action": "+"})

    assert [r["history_type"] for r in response.context["rows"]] == ["+"]


def test_csv_export_has_every_row(admin_client_, changed_pool):
    response = admin_client_.get("/audit.csv", {"source": "inventory.pool"})

    body = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert [r["action"] for r in rows] == ["changed", "created"]
    assert rows[0]["name"] == "train-pool"


@pytest.mark.parametrize("client_name", ["viewer_client", "planner_client"])
def test_audit_log_is_for_admins_only(request, client_name):
    client = request.getfixturevalue(client_name)

    assert client.get("/audit/").status_code == 403
    assert client.get("/audit.csv").status_code == 403


def test_saved_plans_appear_as_creations(admin_client_, planner):

    from planner.models import Plan

    plan = Plan.objects.create(
        title="S1 on the A800 pair",
        author=planner,
        spec={},
        engine_input={},
        result={},
        engine_version="1.0.0+test",
        model_name="Llama",
        route="A",
        tp=8,
        pp=1,
        replicas=2,
        executor_backend="mp",
        pool_kind="dedicated",
    )

    response = admin_client_.get("/audit/", {"source": "planner.plan"})

    rows = response.context["rows"]
    assert [(r["audit_label"], r["history_type"], r["user"]) for r in rows] == [
        (plan.title, "+", planner.username)
    ]
