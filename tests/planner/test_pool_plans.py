"""Pool plans through the planner's doors: the API, manage.py plan --spec and the pages."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from planner.models import PoolPlan

EVALUATE = "/api/v1/plans/evaluate/"
PLANS = "/api/v1/plans/"
POOL_PLANS = "/api/v1/pool-plans/"


def _pool_spec(**extra):
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
            {"name": "router", "model": "llama-3.1-8b", "max_model_len": 8192},
            {"name": "code", "model": "qwen2.5-7b", "max_model_len": 8192, "priority": 3},
        ],
        **extra,
    }


def test_evaluate_a_pool_spec_places_every_model_on_the_inventory_pool(demo_fleet, viewer_api):
    response = viewer_api.post(EVALUATE, _pool_spec(), format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert {m["name"] for m in body["placed"]} == {"chat", "router", "code"}
    hosts = {i["host"] for m in body["placed"] for i in m["instances"]}
    assert hosts <= {"a800-01", "a800-02"}
    assert body["route"]["route"] == "A"
    assert body["route"]["reasons"][0]["text"].startswith("Route A: 3 models")
    assert PoolPlan.objects.count() == 0  # evaluating saves nothing


def test_a_planner_saves_a_pool_plan_through_the_plans_endpoint(demo_fleet, planner_api):
    response = planner_api.post(PLANS, {"title": "Chat pool", "spec": _pool_spec()}, format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    plan = PoolPlan.objects.get(public_id=body["public_id"])
    assert plan.title == "Chat pool"
    assert plan.model_names == ["chat", "router", "code"]
    assert plan.gpus_used == sum(m["gpus"] for m in body["result"]["placed"])
    listed = planner_api.get(POOL_PLANS).json()
    assert [p["public_id"] for p in listed["results"]] == [body["public_id"]]
    detail = planner_api.get(f"{POOL_PLANS}{body['public_id']}/").json()
    assert detail["result"] == body["result"]


def test_a_viewer_cannot_save_a_pool_plan(demo_fleet, viewer_api):
    response = viewer_api.post(PLANS, {"spec": _pool_spec()}, format="json")

    assert response.status_code == 403
    assert PoolPlan.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"models": [{"model": "llama-3.1-8b"}]}, "spec.models"),
        ({"hardware": {"pool": "no-such-pool"}}, "spec.hardware.pool"),
        (
            {"models": [{"model": "nope-1b"}, {"model": "llama-3.1-8b"}]},
            "spec.models[0].model.slug",
        ),
        (
            {"models": [{"model": "llama-3.1-8b", "priority": "high"}, {"model": "qwen2.5-7b"}]},
            "spec.models[0].priority",
        ),
        ({"models": [{"model": "llama-3.1-8b\ud800"}, {"model": "qwen2.5-7b"}]}, None),
    ],
    ids=["one-model", "unknown-pool", "unknown-model", "priority-word", "lone-surrogate"],
)
def test_bad_pool_specs_get_a_400_naming_the_field_and_save_nothing(
    demo_fleet, planner_api, change, field
):
    # json.dumps escapes a lone surrogate (\ud800), as a hostile client would send it.
    body = json.dumps({"spec": _pool_spec(**change)})
    response = planner_api.post(PLANS, body, content_type="application/json")

    assert response.status_code == 400, response.content
    if field is not None:
        assert field in response.json(), response.json()
    assert PoolPlan.objects.count() == 0


def test_manage_py_plan_prints_a_pool_plan(demo_fleet, tmp_path, capsys):
    spec = tmp_path / "pool.json"
    spec.write_text(json.dumps(_pool_spec()), encoding="utf-8")

    call_command("plan", "--spec", str(spec))

    body = json.loads(capsys.readouterr().out)
    assert {m["name"] for m in body["placed"]} == {"chat", "router", "code"}


def test_manage_py_plan_names_the_bad_pool_field(demo_fleet, tmp_path):
    spec = tmp_path / "pool.json"
    spec.write_text(json.dumps(_pool_spec(models=[{"model": "x"}])), encoding="utf-8")

    with pytest.raises(CommandError, match="models"):
        call_command("plan", "--spec", str(spec))


def test_the_pool_page_shows_the_gpu_map_and_each_model(demo_fleet, planner, planner_client):
    from planner.services.pools import pool_create

    plan = pool_create(spec=_pool_spec(), actor=planner, title="Chat pool")

    page = planner_client.get(plan.get_absolute_url())
    listing = planner_client.get("/plans/pools/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "GPU map" in html
    for name in ("chat", "router", "code"):
        assert "pool-gpu pool-colour-" in html
        assert name in html
    assert "Route A" in html
    recommended = html.split('data-testid="pool-bundle-recommended"')[0].rsplit("<a ", 1)[1]
    assert "bundle.zip?route=A" in recommended
    folded = html.split('data-testid="pool-bundle-other"')[1].split("</details>")[0]
    assert "bundle.zip?route=C" in folded
    assert "not generated yet" not in html
    assert listing.status_code == 200
    assert "Chat pool" in listing.content.decode()


def test_the_pool_route_c_bundle_serves_every_placed_model_from_one_serve_config(
    demo_fleet, planner, planner_client
):
    import io
    import zipfile

    import yaml

    from planner.services.pools import pool_create

    plan = pool_create(spec=_pool_spec(), actor=planner, title="Chat pool")

    response = planner_client.get(f"{plan.get_absolute_url()}bundle.zip?route=C")

    assert response.status_code == 200
    assert "route-c.zip" in response["Content-Disposition"]
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert names[0] == "README.md"
    serve = next(n for n in names if n.endswith(".yaml") and "serve" in n)
    config = yaml.safe_load(zipfile.ZipFile(io.BytesIO(response.content)).read(serve))
    apps = {a["name"]: a for a in config["applications"]}
    assert set(apps) == {"chat", "router", "code"}
    assert {a["route_prefix"] for a in apps.values()} == {"/chat", "/router", "/code"}
    assert "site.yml" in names


def test_the_pool_route_a_bundle_puts_each_model_on_its_planned_gpus_behind_one_router(
    demo_fleet, planner, planner_client
):
    import io
    import zipfile

    import yaml

    from planner.engine.pool.result import PoolResult
    from planner.services.pools import pool_create

    plan = pool_create(spec=_pool_spec(), actor=planner, title="Chat pool")
    result = PoolResult.from_dict(plan.result)

    response = planner_client.get(f"{plan.get_absolute_url()}bundle.zip?route=A")

    assert response.status_code == 200
    assert "route-a.zip" in response["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = archive.namelist()
    assert names[0] == "README.md"
    assert "site.yml" in names
    table = json.loads(archive.read("allocation.json"))
    planned = {(i.host, i.gpu_indices) for m in result.placed for i in m.instances}
    servers = {
        (h["host"], tuple(int(g) for g in p["cuda_visible_devices"].split(",")))
        for h in table["hosts"]
        for p in h["processes"]
        if p["kind"] == "vllm"
    }
    assert servers == planned
    config = yaml.safe_load(archive.read("litellm.yaml"))
    routed = {e["model_name"] for e in config["model_list"]}
    assert len(routed) == len(result.placed)
    assert {e["litellm_params"]["model"] for e in config["model_list"]} == {
        f"hosted_vllm/{n}" for n in routed
    }
    assert len(config["model_list"]) == sum(m.replicas for m in result.placed)
    assert "LiteLLM" in archive.read("README.md").decode()


def test_the_pool_bundle_refuses_an_unknown_route_with_a_400(demo_fleet, planner, planner_client):
    from planner.services.pools import pool_create

    plan = pool_create(spec=_pool_spec(), actor=planner, title="Chat pool")

    response = planner_client.get(f"{plan.get_absolute_url()}bundle.zip?route=B")

    assert response.status_code == 400
    assert "Route A or Route C" in response.content.decode()


def test_a_route_c_pool_page_offers_route_c_first_and_folds_route_a(
    demo_fleet, planner, planner_client
):
    from planner.services.pools import pool_create

    spec = _pool_spec(operations={"models_change_often": True, "self_healing_slo": True})
    plan = pool_create(spec=spec, actor=planner, title="Changing pool")

    html = planner_client.get(plan.get_absolute_url()).content.decode()

    assert plan.route == "C"
    recommended = html.split('data-testid="pool-bundle-recommended"')[0].rsplit("<a ", 1)[1]
    assert "bundle.zip?route=C" in recommended
    folded = html.split('data-testid="pool-bundle-other"')[1].split("</details>")[0]
    assert "bundle.zip?route=A" in folded
