"""A server linked to one model of a pool plan: plan vs reality per model (issue 31)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from monitoring.reality.comparison import Scope, plan_comparison
from monitoring.reality.observation import observe
from monitoring.selectors import resolve_range
from monitoring.simulator.vllm_sim import VllmProfile
from planner.engine.pool.result import PoolResult
from planner.selectors.pool_values import pool_model_plan
from planner.services.pools import pool_create
from tests.monitoring.simulated import feed_simulated
from tests.planner.fleet import build_demo_fleet

pytestmark = pytest.mark.django_db

LLAMA_8B = "meta-llama/Llama-3.1-8B-Instruct"


@pytest.fixture
def pool_plan(planner):
    build_demo_fleet()
    return pool_create(
        spec={
            "hardware": {"pool": "a800-pool"},
            "models": [
                {
                    "name": "chat",
                    "model": "llama-3.1-70b",
                    "max_model_len": 8192,
                    "priority": 8,
                    "workload": {"concurrency": 16, "ttft_slo_ms": 3000},
                },
                {
                    "name": "router",
                    "model": "llama-3.1-8b",
                    "max_model_len": 8192,
                    "workload": {"concurrency": 32},
                },
            ],
        },
        actor=planner,
        title="Chat pool",
    )


def _router_server(blocks: int, seed: int = 1) -> VllmProfile:
    return VllmProfile(
        name=f"router-{seed}",
        model=LLAMA_8B,
        base_rps=3.0,
        max_num_seqs=256,
        num_gpu_blocks=blocks,
        mean_prompt_tokens=1024,
        mean_output_tokens=256,
        itl_s=0.008,
        seed=seed,
    )


def test_the_values_are_the_models_own_on_its_placed_layout(pool_plan):
    placed = PoolResult.from_dict(pool_plan.result).model("router")

    values = pool_model_plan(pool_plan, "router").values()

    assert values.hf_repo == LLAMA_8B
    assert values.replicas == placed.replicas
    assert values.replica.layout.tp == placed.tp
    assert values.replica.kv_tokens == placed.kv_tokens_per_replica  # the pool's own figure
    assert values.url == pool_plan.get_absolute_url()
    assert values.title == "Chat pool · router"
    assert values.ttft_slo_ms is None
    assert pool_model_plan(pool_plan, "chat").values().ttft_slo_ms == 3000


def test_a_router_replica_is_compared_with_the_router_not_the_chat_model(make_target, pool_plan):
    planned = pool_model_plan(pool_plan, "router").values().replica.kv_blocks
    target = make_target(name="router-a", pool_plan=pool_plan, pool_model="router")
    feed_simulated(target, _router_server(int(planned * 0.9)))
    start, end = resolve_range("1h")

    comparison = plan_comparison(target, start=start, end=end)

    assert comparison.scope == Scope.REPLICA
    assert comparison.plan.title == "Chat pool · router"
    rows = {r.quantity: r for r in comparison.rows}
    assert rows["kv_blocks"].planned == planned
    assert rows["kv_blocks"].deviation_pct == pytest.approx(-10.0, abs=0.2)
    seen = observe(target, start, end)
    at_observed = pool_model_plan(pool_plan, "router").predict_at(
        concurrency_per_replica=seen.concurrency,
        avg_input_tokens=seen.avg_input_tokens,
        avg_output_tokens=seen.avg_output_tokens,
    )
    assert rows["output_throughput"].planned == pytest.approx(at_observed.output_tok_s, rel=0.05)
    assert not [w for w in comparison.warnings if w.code == "model_mismatch"]


def test_the_models_replicas_are_summed_apart_from_the_other_models(make_target, pool_plan):
    a = make_target(name="router-a", pool_plan=pool_plan, pool_model="router")
    make_target(name="router-b", pool_plan=pool_plan, pool_model="router")
    make_target(name="chat-a", pool_plan=pool_plan, pool_model="chat")
    start, end = resolve_range("1h")

    whole = plan_comparison(a, start=start, end=end, scope="plan")

    assert whole.targets == ("router-a", "router-b")


def test_the_target_page_shows_the_pool_models_comparison(make_target, pool_plan, viewer_client):
    target = make_target(name="router-a", pool_plan=pool_plan, pool_model="router")
    feed_simulated(target, _router_server(1000))

    page = viewer_client.get(target.get_absolute_url()).content.decode()

    assert "Chat pool · router" in page
    assert pool_plan.get_absolute_url() in page


def test_the_pool_page_compares_each_model_with_its_own_servers(
    make_target, pool_plan, viewer_client
):
    router = make_target(name="router-a", pool_plan=pool_plan, pool_model="router")
    feed_simulated(router, _router_server(1000))
    make_target(name="chat-a", pool_plan=pool_plan, pool_model="chat")
    url = f"/monitoring/pool-plans/{pool_plan.public_id}/reality/"

    page = viewer_client.get(pool_plan.get_absolute_url()).content.decode()
    section = viewer_client.get(url)

    assert f'data-reality-url="{url}"' in page  # the page defers the comparison to the section
    assert section.status_code == 200
    summaries = section.context["summaries"]
    assert [s.target.pool_model for s in summaries] == ["chat", "router"]
    html = section.content.decode()
    assert '<h3><span translate="no">router</span></h3>' in html
    assert f"{router.get_absolute_url()}?scope=plan" in html


def test_a_pool_plan_without_linked_servers_says_how_to_link_them(pool_plan, viewer_client):
    response = viewer_client.get(f"/monitoring/pool-plans/{pool_plan.public_id}/reality/")

    assert response.status_code == 200
    assert "No monitored server is linked to this yet" in response.content.decode()


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"pool_model": "nope"}, "pool_model", "chat, router"),
        ({"pool_model": ""}, "pool_model", "chat, router"),
    ],
)
def test_a_pool_link_names_a_placed_model(make_target, pool_plan, fields, field, words):
    with pytest.raises(ValidationError) as exc:
        make_target(pool_plan=pool_plan, **fields)
    assert words in " ".join(exc.value.message_dict[field])


def test_a_model_without_its_pool_plan_is_refused(make_target):
    with pytest.raises(ValidationError) as exc:
        make_target(pool_model="router")
    assert "pool_plan" in exc.value.message_dict


def test_a_plan_and_a_pool_plan_are_not_both_linked(make_target, pool_plan, planner):
    from planner.services import plan_create
    from tests.planner.conftest import S1_SPEC

    plan = plan_create(spec={**S1_SPEC}, actor=planner)
    with pytest.raises(ValidationError) as exc:
        make_target(plan=plan, pool_plan=pool_plan, pool_model="router")
    assert "not both" in " ".join(exc.value.message_dict["pool_plan"])


def test_the_api_links_a_pool_model_and_names_a_wrong_one(pool_plan, planner_api):
    url = "/api/v1/monitoring/targets/"
    body = {
        "name": "router-api",
        "kind": "vllm",
        "base_url": "http://127.0.0.1:9/router",
        "pool_plan": str(pool_plan.public_id),
        "pool_model": "router",
    }
    created = planner_api.post(url, body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["pool_plan"] == str(pool_plan.public_id)
    assert created.json()["pool_model"] == "router"

    wrong = planner_api.post(url, {**body, "name": "x", "pool_model": "nope"}, format="json")
    assert wrong.status_code == 400
    assert "pool_model" in wrong.json()
