"""A plan proposes owners and mechanisms (DOMAIN.md §7, seed 001): S1 dedicated, S3 shared."""

import pytest

from planner.decisions import services
from planner.decisions.prefill import proposal_from_plan
from planner.models import Plan


def _rows(decision):
    return {r.kind: r for r in decision.responsibilities.all()}


@pytest.mark.parametrize("fixture", ["s1_static_plan", "s1_engine_plan"], ids=["static", "engine"])
def test_s1_dedicated_route_a_proposes_mp_and_no_ray_from_the_plan_alone(request, planner, fixture):
    # Nothing in the plan says a platform reserves or restarts anything: the prefill states
    # what the plan computed and marks the rest for the team to confirm, with no owner.
    plan = request.getfixturevalue(fixture)
    assert plan.route == "A"

    decision = services.decision_create_from_plan(plan=plan, actor=planner)

    rows = _rows(decision)
    assert decision.plan == plan
    assert decision.pool_kind == "dedicated"
    assert decision.route == "A"
    assert decision.executor_backend == "mp"
    assert decision.layout == "TP8×PP1×2"
    everything = " ".join(
        [decision.verifiable_sentence, decision.consequences, decision.decision_text]
        + [f"{r.owner} {r.mechanism}" for r in rows.values()]
    )
    assert "platform already" not in everything.lower()
    assert "existing platform" not in everything.lower()
    assert {r.owner for r in rows.values()} == {""}
    assert "To confirm:" in rows["allocation"].mechanism
    assert "both nodes (a800-01, a800-02)" in rows["allocation"].mechanism
    assert "mp" in rows["workers"].mechanism
    assert "no Ray" in rows["workers"].mechanism
    assert rows["ray_benefit"].mechanism.startswith("No Ray: 0 signals for Ray hit")
    assert "nginx" in rows["recovery"].mechanism
    assert "To confirm:" in rows["recovery"].mechanism
    assert decision.verifiable_sentence.startswith("Keep mp without Ray, because 0 signals")
    assert "To confirm:" in decision.verifiable_sentence
    assert "Ray placement group" not in {r.owner for r in rows.values()}


@pytest.mark.parametrize("fixture", ["s1_static_plan", "s1_engine_plan"], ids=["static", "engine"])
def test_replicas_inside_nodes_list_no_cross_node_risk(request, planner, fixture):
    # Two TP8 replicas, each inside one node: no NCCL traffic crosses nodes, so no NIC risk.
    decision = services.decision_create_from_plan(
        plan=request.getfixturevalue(fixture), actor=planner
    )

    assert "NCCL may pick the wrong NIC" not in decision.consequences
    assert "NCCL_SOCKET_IFNAME" not in decision.consequences


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
    assert rows["allocation"].owner == ""
    assert "To confirm:" in rows["allocation"].mechanism
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
