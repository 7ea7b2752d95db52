"""A plan proposes owners and mechanisms (DOMAIN.md §7, seed 001): S1 dedicated, S3 shared."""

import pytest

from planner.decisions import services
from planner.decisions.prefill import proposal_from_plan
from planner.models import Plan


def _rows(decision):
    return {r.kind: r for r in decision.responsibilities.all()}


@pytest.mark.parametrize("fixture", ["s1_static_plan", "s1_engine_plan"], ids=["static", "engine"])
def test_s1_dedicated_route_a_proposes_platform_mp_and_no_ray_migration(request, planner, fixture):
    plan = request.getfixturevalue(fixture)
    assert plan.route == "A"

    decision = services.decision_create_from_plan(plan=plan, actor=planner)

    rows = _rows(decision)
    assert decision.plan == plan
    assert decision.pool_kind == "dedicated"
    assert decision.route == "A"
    assert decision.executor_backend == "mp"
    assert decision.layout == "TP8×PP1×2"
    assert rows["allocation"].owner == "Existing platform"
    assert "reserves both nodes (a800-01, a800-02)" in rows["allocation"].mechanism
    assert rows["workers"].owner == "Existing platform"
    assert "mp" in rows["workers"].mechanism
    assert "no Ray" in rows["workers"].mechanism
    assert rows["ray_benefit"].mechanism.startswith("No Ray migration")
    assert rows["recovery"].owner == "Existing platform"
    assert "nginx" in rows["recovery"].mechanism
    assert decision.verifiable_sentence.startswith("Keep mp, because the existing platform")
    assert "Ray placement group" not in {r.owner for r in rows.values()}


@pytest.mark.parametrize(
    "fixture", ["s3_static_plan", "s3_shared_engine_plan"], ids=["static", "engine"]
)
def test_s3_shared_route_b_proposes_placement_group_with_the_plans_bundles(
    request, planner, fixture
):
    plan = request.getfixturevalue(fixture)
    assert (plan.route, plan.tp, plan.pp, plan.replicas) == ("B", 4, 2, 1)

    decision = services.decision_create_from_plan(plan=plan, actor=planner)

    rows = _rows(decision)
    assert decision.pool_kind == "shared"
    assert decision.executor_backend == "ray"
    assert rows["allocation"].owner == "Ray placement group"
    mechanism = rows["allocation"].mechanism
    assert mechanism.count('{"GPU": 4}') == 2
    assert "a100-01" in mechanism
    assert "a100-02" in mechanism
    assert "STRICT_SPREAD" in mechanism
    assert 'A single {"GPU": 8} bundle is unplaceable' in mechanism
    assert rows["workers"].owner == "Ray cluster"
    assert "--num-gpus=4" in rows["workers"].mechanism
    assert "--distributed-executor-backend ray" in rows["workers"].mechanism
    # Recovery has no owner until someone names one: an actor reappearing is not recovery.
    assert rows["recovery"].owner == ""
    assert "max_restarts" in rows["recovery"].mechanism
    assert "placement evidence" in rows["proof"].mechanism
    assert decision.verifiable_sentence.startswith("Adopt Ray placement groups")
    assert '{"GPU": 8}' in decision.alternatives


def test_s3_dedicated_engine_plan_proposes_mp_across_nodes(planner, s3_dedicated_engine_plan):
    decision = services.decision_create_from_plan(plan=s3_dedicated_engine_plan, actor=planner)

    rows = _rows(decision)
    assert decision.executor_backend == "mp"
    assert rows["allocation"].owner == "Existing platform"
    assert "--nnodes 2" in rows["workers"].mechanism
    assert "--headless" in rows["workers"].mechanism
    assert decision.verifiable_sentence.startswith("Keep mp")


def test_prefill_survives_a_result_with_missing_keys(planner):
    plan = Plan(
        title="old snapshot",
        author=planner,
        spec={},
        engine_input={},
        result={"recommendation": {}},
        engine_version="0.0.1",
        model_name="Some model",
        route="A",
        tp=2,
        pp=1,
        replicas=2,
        executor_backend="mp",
        pool_kind="shared",
        hostnames=["h1", "h2"],
    )
    plan.save()

    proposal = proposal_from_plan(plan)

    assert proposal["layout"] == "TP2×PP1×2"
    assert proposal["responsibilities"]["allocation"]["owner"] == "Ray placement group"
    assert proposal["estimates"] == {}


def test_engine_estimates_are_shown_beside_the_evidence(planner_client, s1_engine_plan):
    response = planner_client.get(f"/decisions/new/from-plan/{s1_engine_plan.public_id}/")

    assert response.status_code == 200
    assert "plan estimate" in response.content.decode()
