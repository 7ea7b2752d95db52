"""'What if' on a pool plan: add or remove a model, change a model's load, the machines."""

from __future__ import annotations

import pytest

from planner.engine.pool.result import PoolResult
from planner.models import PoolPlan
from planner.presentation.pool_compare import compare_pools
from planner.services.pools import pool_create, pool_evaluate, pool_model_names


def _spec():
    return {
        "hardware": {"pool": "a800-pool"},
        "models": [
            {
                "name": "chat",
                "model": "llama-3.1-70b",
                "max_model_len": 8192,
                "priority": 8,
                "workload": {"concurrency": 16},
            },
            # No name: the engine derives one from the repository, and a what-if keeps it.
            {"model": "llama-3.1-8b", "max_model_len": 8192},
            {"name": "code", "model": "qwen2.5-7b", "max_model_len": 8192, "priority": 3},
        ],
    }


@pytest.fixture
def pool(demo_fleet, planner):
    return pool_create(spec=_spec(), actor=planner, title="Three models")


def _url(pool: PoolPlan) -> str:
    return f"/plans/pools/{pool.public_id}/what-if/"


def test_names_follow_the_spec_order_with_the_derived_default(pool):
    assert pool_model_names(pool) == ["chat", "llama-3-1-8b-instruct", "code"]


def test_the_pool_page_offers_the_what_if_form(pool, viewer_client):
    page = viewer_client.get(pool.get_absolute_url()).content.decode()

    assert f'action="{_url(pool)}"' in page
    assert '<option value="llama-3-1-8b-instruct">' in page


def test_removing_a_model_frees_its_gpus_and_names_it_not_in_the_pool(pool, viewer_client):
    response = viewer_client.get(_url(pool), {"remove_model": "code"})

    assert response.status_code == 200
    comparison = response.context["comparison"]
    before = PoolResult.from_dict(pool.result)
    code = next(m for m in comparison.models if m.name == "code")
    assert code.before.gpus == before.model("code").gpus > 0
    assert code.after.gpus == 0
    assert code.after.slo_met is None
    assert code.after.layout == "not in this pool"
    used = next(r for r in comparison.totals if r.key == "gpus_used")
    assert used.right == used.left - code.before.gpus  # removing a model moves no other one
    assert PoolPlan.objects.count() == 1  # looking saves nothing
    assert 'Without <span translate="no">code</span>' in response.content.decode()


def test_a_heavier_load_gives_the_model_more_gpus(pool, viewer_client):
    response = viewer_client.get(_url(pool), {"load_model": "chat", "concurrency": 200})

    assert response.status_code == 200
    chat = next(m for m in response.context["comparison"].models if m.name == "chat")
    assert chat.changed
    assert chat.after.gpus > chat.before.gpus


def test_adding_a_model_places_it_beside_the_others(pool, viewer_client):
    response = viewer_client.get(_url(pool), {"add_model": "qwen3-8b", "add_concurrency": 8})

    assert response.status_code == 200
    added = next(m for m in response.context["comparison"].models if m.name == "qwen3-8b")
    assert added.before.layout == "not in this pool"
    assert added.after.gpus >= 1
    assert added.after.slo_met is not None
    html = response.content.decode()
    assert 'With <span translate="no">qwen3-8b</span> added, at 8 concurrent sequences' in html


def test_an_added_model_of_a_taken_name_gets_a_name_of_its_own(pool, planner_client):
    response = planner_client.post(_url(pool), {"add_model": "qwen2.5-7b", "add_concurrency": 2})

    new = PoolPlan.objects.exclude(pk=pool.pk).get()
    assert response.status_code == 302
    assert new.model_names == ["chat", "llama-3-1-8b-instruct", "code", "qwen2-5-7b"]
    again = planner_client.post(
        new.get_absolute_url() + "what-if/", {"add_model": "qwen2.5-7b", "add_concurrency": 2}
    )
    assert again.status_code == 302
    newest = PoolPlan.objects.order_by("-created_at").first()
    assert newest.model_names[-1] == "qwen2-5-7b-2"


def test_compare_pools_of_the_same_result_changes_nothing(pool):
    result = PoolResult.from_dict(pool.result)
    assert compare_pools(result, result).changed_count == 0


def test_more_machines_place_the_pool_again(pool, viewer_client):
    response = viewer_client.get(_url(pool), {"machine_count": 3})

    assert response.status_code == 200
    spare = next(r for r in response.context["comparison"].totals if r.key == "spare_gpus")
    assert spare.right > spare.left


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ({}, None, "Change at least one answer"),
        ({"load_model": "chat"}, "concurrency", "new number of sequences"),
        ({"concurrency": 4}, "load_model", "Choose the model"),
        ({"remove_model": "chat", "load_model": "chat", "concurrency": 4}, "load_model", "removed"),
        ({"remove_model": "nope"}, "remove_model", "Select a valid choice"),
        ({"machine_count": 0}, "machine_count", "Enter between 1"),
        ({"load_model": "chat", "concurrency": "x"}, "concurrency", "whole number"),
        ({"add_model": "qwen3-8b"}, "add_concurrency", "added model's number of sequences"),
        ({"add_concurrency": 4}, "add_model", "Choose the model to add"),
        ({"add_model": "no-such-model", "add_concurrency": 4}, "add_model", "valid choice"),
    ],
)
def test_bad_answers_are_named_on_their_field(pool, viewer_client, query, field, words):
    response = viewer_client.get(_url(pool), query)

    assert response.status_code == 400
    form = response.context["what_if_form"]
    errors = form.errors.get(field or "__all__")
    assert errors, form.errors
    assert any(words in e for e in errors), form.errors


def test_a_pool_of_two_keeps_both(demo_fleet, planner, viewer_client):
    spec = _spec()
    spec["models"] = spec["models"][:2]
    two = pool_create(spec=spec, actor=planner)

    response = viewer_client.get(_url(two), {"remove_model": "chat"})

    assert response.status_code == 400
    assert "single-model wizard" in str(response.context["what_if_form"].errors["remove_model"])


def test_a_planner_saves_the_what_if_as_a_new_pool_plan(pool, planner_client):
    response = planner_client.post(_url(pool), {"remove_model": "code"})

    new = PoolPlan.objects.exclude(pk=pool.pk).get()
    assert response.status_code == 302
    assert response["Location"] == new.get_absolute_url()
    assert new.model_names == ["chat", "llama-3-1-8b-instruct"]
    assert new.title == "Three models — what if without code"
    assert "code" not in [m["name"] for m in new.spec["models"]]


def test_a_viewer_cannot_save_it(pool, viewer_client):
    response = viewer_client.post(_url(pool), {"remove_model": "code"})

    assert response.status_code == 403
    assert PoolPlan.objects.count() == 1


def test_the_evaluation_matches_the_service(pool, viewer_client):
    """The page's right-hand side is exactly what pool_evaluate places for the changed spec."""
    response = viewer_client.get(_url(pool), {"remove_model": "code"})
    spec = {**pool.spec, "models": [m for m in pool.spec["models"] if m.get("name") != "code"]}
    direct = pool_evaluate(spec=spec).result

    after = {m.name: m.after for m in response.context["comparison"].models}
    assert {m.name for m in direct.placed} == {"chat", "llama-3-1-8b-instruct"}
    for m in direct.placed:
        assert after[m.name].gpus == m.gpus
        assert after[m.name].output_tok_s == m.prediction.output_tok_s
