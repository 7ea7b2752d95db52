"""The planner API: evaluate, plans (create, list, retrieve, compare, re-run, exports)."""

import io
import zipfile

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from planner.engine.result import PlanResult
from planner.models import Plan
from planner.presentation.api import api_result
from planner.presentation.messages import english_text
from planner.services import plan_create
from tests.planner.engine.conftest import LLAMA_8B_CONFIG

EVALUATE = "/api/v1/plans/evaluate/"
PLANS = "/api/v1/plans/"


def test_evaluate_s1_replicas_inside_the_a800_nodes(demo_fleet, planner_api, s1_spec):
    response = planner_api.post(EVALUATE, s1_spec, format="json")

    assert response.status_code == 200, response.json()
    rec = response.json()["recommendation"]
    assert rec["route"] == "A"
    assert rec["pp"] == 1
    assert rec["tp"] * rec["replicas"] == 16
    assert rec["balancer"] == "nginx"
    cross = [c for c in response.json()["candidates"] if c["tp"] == 16]
    assert all(c["score"] < 100 for c in cross)


def test_evaluate_s2a_two_tp4_replicas_on_the_a100_pool(demo_fleet, planner_api, s2a_spec):
    response = planner_api.post(EVALUATE, s2a_spec, format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["recommendation"]["route"] == "A"
    assert (body["recommendation"]["tp"], body["recommendation"]["replicas"]) in {(4, 2), (2, 4)}
    assert body["node_selection"]["hosts"] == ["a100-01", "a100-02"]
    assert "NCCL_SOCKET_IFNAME=eth1" in body["configs"]["env_file"]


def test_evaluate_is_the_same_json_as_the_engine(demo_fleet, viewer_api, s2a_spec):
    from planner.services import plan_evaluate

    response = viewer_api.post(EVALUATE, s2a_spec, format="json")

    assert response.status_code == 200  # evaluating writes nothing: viewers may
    result = plan_evaluate(spec=s2a_spec).result
    body = response.json()
    assert body == api_result(result)
    # Every message: its code and parameters, and the English text beside them.
    reason = body["recommendation"]["reasons"][0]
    assert reason == {
        **result.recommendation.reasons[0].to_json(),
        "text": english_text(result.recommendation.reasons[0]),
    }
    pitfall = body["pitfalls"][0]["message"]
    assert pitfall["code"].startswith("pit_")
    assert pitfall["text"]
    assert pitfall["action"]
    assert PlanResult.from_dict(body).to_dict() == result.to_dict()  # the text is extra


def _node(hostname):
    return {"hostname": hostname, "gpu": "a100-80g-sxm", "gpu_count": 4}


def _inline(gpus_per_node=4):
    return {
        "node_count": 2,
        "gpus_per_node": gpus_per_node,
        "gpu": "a100-80g-sxm",
        "inter_node_gbps": 25,
    }


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param(
            {"pinned_layout": {"tp": 3, "pp": 1, "replicas": 1}},
            "pinned_layout.tp",
            id="tp-not-dividing-heads",
        ),
        pytest.param(
            {"pinned": {"tp": 3}},
            "pinned.tp",
            id="tp-not-dividing-heads-as-pinned",
        ),
        pytest.param({"hardware": _inline(0)}, "hardware.nodes[0].gpu_count", id="zero-gpus"),
        pytest.param(
            {"hardware": {"hostnames": ["a100-01"], "free_gpus": {"a100-01": 0}}},
            "hardware.nodes",
            id="zero-free-gpus",
        ),
        pytest.param({"gpu_memory_utilization": 0}, "gpu_memory_utilization", id="util-zero"),
        pytest.param({"gpu_memory_utilization": 1.2}, "gpu_memory_utilization", id="util-above-1"),
        pytest.param({"max_model_len": 10**6}, "max_model_len", id="context-above-limit"),
        pytest.param({"model": "no-such-model"}, "model.slug", id="unknown-slug"),
        pytest.param(
            {"hardware": {"hostnames": ["a100-01", "ghost-07"]}},
            "hardware.hostnames",
            id="unknown-hostname",
        ),
        pytest.param({"hardware": {"pool": "no-pool"}}, "hardware.pool", id="unknown-pool"),
        # Identifiers that reach generated scripts (#15 item 1).
        pytest.param(
            {"hardware": {**_inline(), "nodes": [_node("n1\ntouch /tmp/PWNED_HOST")]}},
            "hardware.nodes[0].hostname",
            id="newline-in-hostname",
        ),
        pytest.param(
            {"hardware": {"nodes": [{**_node("n1"), "address": "1.2.3.4;include /x"}]}},
            "hardware.nodes[0].address",
            id="directive-in-address",
        ),
        pytest.param(
            {"hardware": {**_inline(), "data_nic": "eth1;reboot"}},
            "hardware.nodes[0].nics[0].name",
            id="command-in-interface-name",
        ),
        pytest.param({"vllm_image": "vllm/vllm-openai $(id)"}, "vllm_image", id="bad-image"),
        pytest.param(
            {"model": {"hf_config": LLAMA_8B_CONFIG, "hf_repo": "a/b`id`"}},
            "model.hf_repo",
            id="bad-repository",
        ),
    ],
)
def test_evaluate_bad_spec_is_400_naming_the_field(
    demo_fleet, planner_api, s2a_spec, change, field
):
    spec = {**s2a_spec, **change}

    response = planner_api.post(EVALUATE, spec, format="json")

    assert response.status_code == 400
    errors = response.json()
    assert field in errors, errors
    assert errors[field][0]


def test_evaluate_rejects_a_non_object(planner_api):
    response = planner_api.post(EVALUATE, [1, 2], format="json")
    assert response.status_code == 400


def test_evaluate_needs_a_signed_in_user(client, s2a_spec):
    response = client.post(EVALUATE, s2a_spec, content_type="application/json")
    assert response.status_code in {401, 403}


def test_create_plan_from_spec(demo_fleet, planner_api, planner, s2a_spec):
    response = planner_api.post(PLANS, {"title": "S2a", "spec": s2a_spec}, format="json")

    assert response.status_code == 201, response.json()
    plan = Plan.objects.get(public_id=response.json()["public_id"])
    assert plan.author == planner
    assert plan.title == "S2a"
    assert plan.route == "A"
    assert plan.hostnames == ["a100-01", "a100-02"]
    assert plan.engine_version
    assert response.json()["result"]["recommendation"]["route"] == "A"


def test_create_plan_bad_spec_prefixes_the_field(demo_fleet, planner_api, s2a_spec):
    spec = {**s2a_spec, "model": "no-such-model"}
    response = planner_api.post(PLANS, {"spec": spec}, format="json")
    assert response.status_code == 400
    assert "spec.model.slug" in response.json()


def test_viewer_cannot_create_plans(demo_fleet, viewer_api, s2a_spec):
    response = viewer_api.post(PLANS, {"spec": s2a_spec}, format="json")
    assert response.status_code == 403
    assert not Plan.objects.exists()


@pytest.fixture
def two_plans(demo_fleet, planner, admin_user, s1_spec, s2a_spec):
    return plan_create(spec=s1_spec, actor=planner), plan_create(spec=s2a_spec, actor=admin_user)


def test_list_filters_by_model_route_author_machine(two_plans, viewer_api):
    s1, s2a = two_plans

    def ids(query):
        response = viewer_api.get(PLANS, query)
        assert response.status_code == 200
        return {row["public_id"] for row in response.json()["results"]}

    assert ids({}) == {str(s1.public_id), str(s2a.public_id)}
    assert ids({"model": "qwen2.5-32b"}) == {str(s2a.public_id)}
    assert ids({"model": "Llama"}) == {str(s1.public_id)}
    assert ids({"route": "A"}) == {str(s1.public_id), str(s2a.public_id)}
    assert ids({"route": "B"}) == set()
    assert ids({"author": "ada-admin"}) == {str(s2a.public_id)}
    assert ids({"machine": "a800-01"}) == {str(s1.public_id)}
    assert ids({"machine": "a800-0"}) == set()  # whole hostnames only


def test_list_query_count_does_not_grow_with_plans(two_plans, viewer_api, planner, s2a_spec):
    with CaptureQueriesContext(connection) as few:
        viewer_api.get(PLANS)
    for _ in range(5):
        plan_create(spec=s2a_spec, actor=planner)
    with CaptureQueriesContext(connection) as many:
        viewer_api.get(PLANS)
    assert len(many) == len(few) <= 6


def test_retrieve_compare_rerun_exports(two_plans, planner_api, viewer_api):
    s1, s2a = two_plans

    detail = viewer_api.get(f"{PLANS}{s1.public_id}/")
    assert detail.status_code == 200
    assert detail.json()["result"]["recommendation"]["route"] == "A"
    assert detail.json()["spec"]["model"] == "llama-3.1-70b"

    compare = viewer_api.get(f"{PLANS}compare/", {"a": s1.public_id, "b": s2a.public_id})
    assert compare.status_code == 200
    rows = {r["key"]: r for r in compare.json()["differences"]["recommendation"]}
    assert rows["tp"]["changed"] is (s1.tp != s2a.tp)
    assert compare.json()["differences"]["changed_count"] > 0
    assert viewer_api.get(f"{PLANS}compare/", {"a": "x"}).status_code == 400

    assert viewer_api.post(f"{PLANS}{s1.public_id}/rerun/").status_code == 403
    rerun = planner_api.post(f"{PLANS}{s1.public_id}/rerun/")
    assert rerun.status_code == 201
    assert rerun.json()["rerun_of"] == str(s1.public_id)

    md = viewer_api.get(f"{PLANS}{s1.public_id}/export/markdown/")
    assert md.status_code == 200
    assert md["Content-Type"].startswith("text/markdown")
    assert s1.title in md.content.decode()
    js = viewer_api.get(f"{PLANS}{s1.public_id}/export/json/")
    assert PlanResult.from_dict(js.json()["result"]).to_dict() == s1.result

    archive = viewer_api.get(f"{PLANS}{s1.public_id}/configs/")
    assert archive["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    assert "serveplan-configs/nginx.conf" in names


def test_schema_documents_the_planner_routes(viewer_api):
    response = viewer_api.get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/v1/plans/evaluate/" in paths
    assert "/api/v1/plans/" in paths
    assert "/api/v1/plans/compare/" in paths
    assert "/api/v1/plans/{public_id}/" in paths
