"""The "several models" wizard: machines once, a row per model, saved as a pool plan."""

from __future__ import annotations

import pytest

from planner.models import PoolPlan

URL = "/plans/pools/new/"


def _row(i: int, **fields) -> dict[str, object]:
    base = {
        "model": "",
        "name": "",
        "weight_dtype": "",
        "max_model_len": 8192,
        "concurrency": 16,
        "avg_input_tokens": 1024,
        "avg_output_tokens": 256,
        "priority": 5,
        "ttft_slo_ms": "",
        "itl_slo_ms": "",
        "pinned_tp": "",
        "pinned_replicas": "",
    }
    return {f"models-{i}-{k}": v for k, v in {**base, **fields}.items()}


def _post(rows: list[dict[str, object]], **machines) -> dict[str, object]:
    data: dict[str, object] = {
        "models-TOTAL_FORMS": len(rows),
        "models-INITIAL_FORMS": 0,
        "models-MIN_NUM_FORMS": 0,
        "models-MAX_NUM_FORMS": 16,
        "source": "hypothetical",
        "node_count": 2,
        "gpus_per_node": 8,
        "gpu": "a100-80g-sxm",
        "intra_link": "nvlink",
        "inter_node_gbps": 200,
        "inter_node_kind": "infiniband",
        "title": "",
        **machines,
    }
    for i, row in enumerate(rows):
        data.update(_row(i, **row))
    return data


THREE_MODELS = [
    {"model": "llama-3.1-70b", "name": "chat", "priority": 8, "ttft_slo_ms": 2000},
    {"model": "llama-3.1-8b", "name": "router"},
    {"model": "qwen2.5-7b", "name": "code", "priority": 3},
]


def test_the_page_offers_machines_and_three_model_rows(planner_client):
    response = planner_client.get(URL)

    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('data-testid="pool-model-row"') == 3
    assert 'name="source"' in html
    assert 'name="models-0-model"' in html
    more = planner_client.get(URL + "?rows=5").content.decode()
    assert more.count('data-testid="pool-model-row"') == 5
    capped = planner_client.get(URL + "?rows=999").content.decode()
    assert capped.count('data-testid="pool-model-row"') == 16
    assert planner_client.get(URL + "?rows=x").status_code == 200


def test_viewers_cannot_open_it(viewer_client):
    assert viewer_client.get(URL).status_code == 403
    assert viewer_client.post(URL, _post(THREE_MODELS)).status_code == 403
    assert PoolPlan.objects.count() == 0


def test_three_models_on_two_a100_nodes_make_a_pool_plan(planner_client):
    response = planner_client.post(URL, _post([*THREE_MODELS, {}], title="Team pool"))

    assert response.status_code == 302, response.content.decode()[:2000]
    plan = PoolPlan.objects.get()
    assert response["Location"] == plan.get_absolute_url()
    assert plan.title == "Team pool"
    assert plan.model_names == ["chat", "router", "code"]  # the empty fourth row is skipped
    chat = plan.spec["models"][0]
    assert chat["priority"] == 8
    assert chat["workload"] == {
        "concurrency": 16,
        "avg_input_tokens": 1024,
        "avg_output_tokens": 256,
        "ttft_slo_ms": 2000.0,
    }
    assert plan.spec["hardware"]["node_count"] == 2
    page = planner_client.get(response["Location"])
    assert page.status_code == 200
    assert 'data-testid="pool-bundle-recommended"' in page.content.decode()


def test_one_model_is_not_a_pool(planner_client):
    response = planner_client.post(URL, _post([THREE_MODELS[0], {}, {}]))

    assert response.status_code == 400
    assert "Pick at least 2 models" in response.content.decode()
    assert PoolPlan.objects.count() == 0


@pytest.mark.parametrize(
    ("row", "field", "text"),
    [
        ({"model": "llama-3.1-8b", "pinned_tp": 3}, "pinned_tp", "must divide"),
        ({"model": "llama-3.1-8b", "name": "Bad Name"}, "name", "lower-case letters"),
        ({"model": "", "name": "orphan"}, "model", "Pick the model of this row"),
        ({"model": "llama-3.1-8b", "priority": 11}, "priority", "between 1 and 10"),
        ({"model": "llama-3.1-8b", "pinned_replicas": 2}, "pinned_tp", "needs its TP size"),
    ],
)
def test_a_bad_row_is_named_on_its_field_and_nothing_is_saved(planner_client, row, field, text):
    response = planner_client.post(URL, _post([THREE_MODELS[0], row]))

    assert response.status_code == 400
    form = response.context["formset"].forms[1]
    assert any(text in e for e in form.errors.get(field, [])), form.errors
    assert PoolPlan.objects.count() == 0


def test_two_rows_with_one_name_are_told_apart(planner_client):
    rows = [{"model": "llama-3.1-8b", "name": "same"}, {"model": "qwen2.5-7b", "name": "same"}]
    response = planner_client.post(URL, _post(rows))

    assert response.status_code == 400
    assert "already the name of models[0]" in str(response.context["formset"].forms[1].errors)
    assert PoolPlan.objects.count() == 0


def test_machines_errors_stay_on_the_machines_form(planner_client):
    response = planner_client.post(URL, _post(THREE_MODELS, node_count="", gpu=""))

    assert response.status_code == 400
    assert set(response.context["form"].errors) >= {"node_count", "gpu"}
    assert PoolPlan.objects.count() == 0


def test_an_inventory_pool_is_offered_and_used(planner_client, demo_fleet):
    response = planner_client.post(URL, _post(THREE_MODELS, source="pool", pool="a800-pool"))

    assert response.status_code == 302, response.content.decode()[:2000]
    plan = PoolPlan.objects.get()
    assert plan.spec["hardware"] == {"pool": "a800-pool"}
    assert set(plan.hostnames) <= {"a800-01", "a800-02"}


def test_small_models_that_may_share_gpus_are_shown_two_to_a_gpu(planner_client):
    small = [
        {"model": m, "name": f"small-{i}", "max_model_len": 4096, "concurrency": 4}
        for i, m in enumerate(("llama-3.1-8b", "qwen2.5-7b", "mistral-7b", "qwen3-8b"))
    ]
    machines = {"node_count": 1, "gpu": "l40s", "intra_link": "pcie"}

    response = planner_client.post(URL, _post(small, share_gpus="on", **machines))

    assert response.status_code == 302, response.content.decode()[:2000]
    plan = PoolPlan.objects.get()
    assert plan.spec["share_gpus"] is True
    assert plan.gpus_used == 2  # four models, two per GPU
    html = planner_client.get(response["Location"]).content.decode()
    assert html.count('class="pool-gpu pool-shared"') == 2
    assert html.count("pool-half pool-colour-") == 4
    assert "shares each GPU with another model" in html


def test_gpu_sharing_is_off_unless_ticked(planner_client):
    rows = [{"model": "llama-3.1-8b", "name": "a"}, {"model": "qwen2.5-7b", "name": "b"}]
    response = planner_client.post(URL, _post(rows))

    assert response.status_code == 302
    assert PoolPlan.objects.get().spec["share_gpus"] is False
