"""A decision record for a pool plan (issue 31): prefilled from the pool, linked to it."""

from __future__ import annotations

import pytest

from planner.decisions import services
from planner.decisions.models import DecisionRecord
from planner.decisions.pool_prefill import proposal_from_pool_plan
from planner.engine.pool.result import PoolResult
from planner.services.pools import pool_create
from tests.decisions.conftest import form_data


def _pool(actor, *, changes_often: bool):
    nodes = [
        {"hostname": h, "gpu": "a100-80g-sxm", "gpu_count": 8, "intra_link": "nvlink"}
        for h in ("a100-01", "a100-02")
    ]
    return pool_create(
        spec={
            "hardware": {"nodes": nodes},
            "operations": {"models_change_often": changes_often, "self_healing_slo": changes_often},
            "models": [
                {"name": "chat", "model": "llama-3.1-70b", "max_model_len": 8192, "priority": 8},
                {"name": "router", "model": "llama-3.1-8b", "max_model_len": 8192},
                {"name": "code", "model": "qwen2.5-7b", "max_model_len": 8192, "priority": 3},
            ],
        },
        actor=actor,
        title="Chat pool",
    )


@pytest.fixture
def route_a_pool(planner):
    return _pool(planner, changes_often=False)


@pytest.fixture
def route_c_pool(planner):
    return _pool(planner, changes_often=True)


def test_route_a_proposes_mp_behind_litellm_and_names_every_models_gpus(route_a_pool):
    result = PoolResult.from_dict(route_a_pool.result)
    assert result.route.route == "A"

    proposal = proposal_from_pool_plan(route_a_pool)

    assert proposal["route"] == "A"
    assert proposal["executor_backend"] == "mp"
    assert proposal["title"] == "Serve chat, router, code on one pool as Route A"
    assert "LiteLLM" in proposal["decision_text"]
    assert "no Ray" in proposal["decision_text"]
    allocation = proposal["responsibilities"]["allocation"]["mechanism"]
    for m in result.placed:
        assert m.name in allocation
        assert m.instances[0].host in allocation
    assert "To confirm:" in allocation
    assert "Route C" in proposal["alternatives"]
    assert "LiteLLM is the least proven part" in proposal["consequences"]
    assert proposal["estimates"] == {}  # one model's figures: a pool proposes none
    assert proposal["responsibilities"]["workers"]["owner"] == ""  # no Ray cluster


def test_route_c_proposes_ray_serve_with_its_reasons(route_c_pool):
    result = PoolResult.from_dict(route_c_pool.result)
    assert result.route.route == "C"

    proposal = proposal_from_pool_plan(route_c_pool)

    assert proposal["executor_backend"] == "ray"
    assert proposal["responsibilities"]["workers"]["owner"] == "Ray cluster"
    assert "Ray Serve" in proposal["verifiable_sentence"]
    assert "head node" in proposal["consequences"]
    assert "Route A" in proposal["alternatives"]


def test_the_page_prefills_and_records_a_decision_linked_to_the_pool(route_a_pool, planner_client):
    url = f"/decisions/new/from-pool-plan/{route_a_pool.public_id}/"
    page = planner_client.get(url)
    assert page.status_code == 200
    assert "From the saved pool plan" in page.content.decode()

    response = planner_client.post(url, form_data(page))

    assert response.status_code == 302
    decision = DecisionRecord.objects.get()
    assert decision.pool_plan == route_a_pool
    assert decision.plan is None
    assert decision.route == "A"
    detail = planner_client.get(decision.get_absolute_url()).content.decode()
    assert route_a_pool.get_absolute_url() in detail


def test_the_pool_page_links_to_it_for_planners_only(route_a_pool, planner_client, viewer_client):
    link = 'data-testid="pool-record-decision"'
    assert link in planner_client.get(route_a_pool.get_absolute_url()).content.decode()
    assert link not in viewer_client.get(route_a_pool.get_absolute_url()).content.decode()


def test_the_api_creates_one_from_a_pool_plan(route_c_pool, planner_api):
    response = planner_api.post(
        "/api/v1/decisions/from-pool-plan/",
        {"pool_plan": str(route_c_pool.public_id), "title": "Ray Serve for the pool"},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["pool_plan"] == str(route_c_pool.public_id)
    assert body["plan"] is None
    assert body["title"] == "Ray Serve for the pool"
    assert body["executor_backend"] == "ray"


def test_an_unknown_pool_plan_is_named(planner_api):
    response = planner_api.post(
        "/api/v1/decisions/from-pool-plan/",
        {"pool_plan": "00000000-0000-0000-0000-000000000000"},
        format="json",
    )
    assert response.status_code == 400
    assert "pool_plan" in response.json()


def test_the_markdown_names_the_pool_plan(route_a_pool, planner):
    from planner.decisions.markdown import export_markdown

    decision = services.decision_create_from_pool_plan(pool_plan=route_a_pool, actor=planner)
    text = export_markdown(decision)
    assert f"Pool plan: Chat pool ({route_a_pool.public_id}" in text


def test_a_record_cannot_have_both_sources(route_a_pool, planner, s1_engine_plan):
    from django.db import IntegrityError, transaction

    decision = services.decision_create_from_pool_plan(pool_plan=route_a_pool, actor=planner)
    with pytest.raises(IntegrityError), transaction.atomic():
        DecisionRecord.objects.filter(pk=decision.pk).update(plan=s1_engine_plan)
