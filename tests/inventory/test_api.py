"""REST API under /api/v1/inventory/: reads, writes, permissions and 400s with field errors."""

import json

import pytest
from rest_framework.test import APIClient

from inventory.models import GpuType, Machine, ModelSpec, NetworkInterface
from tests.inventory.conftest import catalog_config
from tests.inventory.factories import (
    GpuTypeFactory,
    MachineFactory,
    ModelSpecFactory,
    PoolFactory,
)

pytestmark = pytest.mark.django_db

API = "/api/v1/inventory"
ENDPOINTS = ["gpu-types", "pools", "machines", "nics", "model-specs", "fleet-summary"]


def machine_payload(**overrides):
    payload = {
        "hostname": "api-node-1",
        "gpu_type": GpuTypeFactory(a800=True).slug,
        "gpu_count": 8,
        "interconnect": "nvlink",
        "pool": PoolFactory(name="prod").name,
        "nics": [
            {"name": "eth1", "speed_gbps": 25, "kind": "ethernet", "role": "data"},
            {"name": "eno1", "speed_gbps": 1, "kind": "ethernet", "role": "management"},
        ],
    }
    payload.update(overrides)
    return payload


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_viewer_reads_every_endpoint(viewer_api, endpoint):
    assert viewer_api.get(f"{API}/{endpoint}/").status_code == 200


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_anonymous_is_refused(endpoint):
    assert APIClient().get(f"{API}/{endpoint}/").status_code in (401, 403)


def test_viewer_cannot_write(viewer_api):
    machine = MachineFactory()

    assert viewer_api.post(f"{API}/machines/", machine_payload(), format="json").status_code == 403
    assert viewer_api.patch(f"{API}/machines/{machine.pk}/", {"gpu_count": 4}).status_code == 403
    assert viewer_api.delete(f"{API}/machines/{machine.pk}/").status_code == 403
    assert Machine.objects.get(pk=machine.pk).gpu_count == 8


def test_planner_creates_a_machine_with_nested_nics_and_history(planner_token_api, planner):
    response = planner_token_api.post(f"{API}/machines/", machine_payload(), format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["gpu_type"] == "a800-80g-sxm"
    assert body["pool"] == "prod"
    assert body["fastest_data_nic"]["name"] == "eth1"
    assert [nic["name"] for nic in body["nics"]] == ["eno1", "eth1"]
    machine = Machine.objects.get(hostname="api-node-1")
    assert machine.history.get().history_user == planner


def test_patch_with_nics_replaces_them_and_without_keeps_them(planner_api):
    machine = MachineFactory()
    url = f"{API}/machines/{machine.pk}/"

    planner_api.patch(url, {"gpu_count": 4}, format="json")
    assert machine.nics.count() == 2
    response = planner_api.patch(
        url, {"nics": [{"name": "ib0", "speed_gbps": 200, "kind": "infiniband"}]}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["gpu_count"] == 4
    assert list(machine.nics.values_list("name", flat=True)) == ["ib0"]


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"gpu_count": 0}, "gpu_count", "GPU count must be between 1 and 64."),
        ({"gpu_count": 65}, "gpu_count", "GPU count must be between 1 and 64."),
        ({"hostname": "taken"}, "hostname", "A machine with this hostname already exists."),
        ({"hostname": "bad_name"}, "hostname", "RFC 1123"),
        ({"gpu_type": "no-such-gpu"}, "gpu_type", "no-such-gpu"),
    ],
    ids=["gpu-count-0", "gpu-count-65", "duplicate-hostname", "bad-hostname", "unknown-gpu"],
)
def test_machine_bad_input_is_400_with_field_errors(planner_api, overrides, field, message):
    MachineFactory(hostname="taken")

    response = planner_api.post(f"{API}/machines/", machine_payload(**overrides), format="json")

    assert response.status_code == 400
    assert any(message in error for error in response.json()[field])
    assert Machine.objects.count() == 1


@pytest.mark.parametrize("speed", [0, -1], ids=["zero", "negative"])
def test_nested_nic_speed_not_above_zero_is_400(planner_api, speed):
    payload = machine_payload(nics=[{"name": "eth1", "speed_gbps": speed}])

    response = planner_api.post(f"{API}/machines/", payload, format="json")

    assert response.status_code == 400
    # DRF keys the errors of a nested list by the item's index.
    assert response.json()["nics"] == {
        "0": {"speed_gbps": [f"NIC speed (Gb/s) must be greater than 0 (got {speed})."]}
    }
    assert not Machine.objects.exists()


def test_duplicate_nic_names_are_400(planner_api):
    payload = machine_payload(
        nics=[{"name": "eth1", "speed_gbps": 25}, {"name": "eth1", "speed_gbps": 100}]
    )

    response = planner_api.post(f"{API}/machines/", payload, format="json")

    assert response.status_code == 400
    assert "eth1" in response.json()["nics"][0]


def test_nic_endpoint_speed_zero_is_400(planner_api):
    machine = MachineFactory(nics=[])

    response = planner_api.post(
        f"{API}/nics/", {"machine": machine.pk, "name": "eth1", "speed_gbps": 0}, format="json"
    )

    assert response.status_code == 400
    assert "speed_gbps" in response.json()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("memory_gib", 0, "Memory (GiB) must be greater than 0 (got 0)."),
        ("hbm_bandwidth_gbs", -1, "Memory bandwidth (GB/s) must be greater than 0 (got -1)."),
    ],
    ids=["memory-0", "bandwidth-negative"],
)
def test_gpu_type_bad_input_is_400(planner_api, field, value, message):
    payload = {
        "slug": "x1",
        "name": "X1",
        "memory_gib": 24,
        "hbm_bandwidth_gbs": 900,
        "bf16_dense_tflops": 100,
        "form_factor": "pcie",
        field: value,
    }

    response = planner_api.post(f"{API}/gpu-types/", payload, format="json")

    assert response.status_code == 400
    assert response.json()[field] == [message]


def test_model_spec_heads_not_divisible_is_400(planner_api):
    spec = ModelSpecFactory()

    response = planner_api.patch(
        f"{API}/model-specs/{spec.pk}/", {"num_kv_heads": 5}, format="json"
    )

    assert response.status_code == 400
    assert "must divide the attention heads" in response.json()["num_kv_heads"][0]


def test_edit_via_api_recomputes_parameters_and_marks_user_modified(planner_api):
    spec = ModelSpecFactory()
    before = spec.total_params

    response = planner_api.patch(f"{API}/model-specs/{spec.pk}/", {"num_layers": 16})

    assert response.status_code == 200
    assert response.json()["total_params"] < before
    assert response.json()["user_modified"] is True


@pytest.mark.parametrize(
    "slug", ["llama-3.1-8b", "qwen3-8b", "qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v3"]
)
def test_import_config_action(planner_api, slug):
    response = planner_api.post(
        f"{API}/model-specs/import-config/",
        {"name": f"Imported {slug}", "config": catalog_config(slug)},
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["total_params"] > 1e9
    assert response.json()["config_json"] == catalog_config(slug)


def test_import_config_as_text(planner_api):
    text = json.dumps(catalog_config("qwen3-8b"))

    response = planner_api.post(
        f"{API}/model-specs/import-config/", {"name": "Q", "config_text": text}, format="json"
    )

    assert response.status_code == 201


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        ({"config_text": "{not json"}, "not valid JSON"),
        ({"config": [1, 2]}, "must be a JSON object"),
        ({"config": {"model_type": "mystery"}}, "num_hidden_layers"),
        ({}, "config_text"),
    ],
    ids=["not-json", "array", "unknown-architecture", "missing"],
)
def test_import_config_bad_input_is_400_on_config(planner_api, payload, needle):
    response = planner_api.post(
        f"{API}/model-specs/import-config/", {"name": "Bad", **payload}, format="json"
    )

    assert response.status_code == 400
    assert needle in response.json()["config"][0]
    assert not ModelSpec.objects.exists()


def test_viewer_cannot_import_config(viewer_api):
    response = viewer_api.post(
        f"{API}/model-specs/import-config/",
        {"name": "X", "config": catalog_config("qwen3-8b")},
        format="json",
    )

    assert response.status_code == 403


def test_delete_gpu_type_in_use_is_409_with_users(planner_api):
    gpu = GpuTypeFactory()
    MachineFactory(hostname="user-of-gpu", gpu_type=gpu)

    response = planner_api.delete(f"{API}/gpu-types/{gpu.pk}/")

    assert response.status_code == 409
    assert response.json()["used_by"] == ["machine: user-of-gpu"]
    assert GpuType.objects.filter(pk=gpu.pk).exists()


def test_delete_unused_model_spec(planner_api):
    spec = ModelSpecFactory()

    assert planner_api.delete(f"{API}/model-specs/{spec.pk}/").status_code == 204


def test_list_filters_and_ordering_come_from_the_shared_filterset(viewer_api):
    a100 = GpuTypeFactory(a100=True)
    MachineFactory(hostname="alpha", gpu_count=8)
    MachineFactory(hostname="bravo", gpu_type=a100, gpu_count=4)
    MachineFactory(hostname="charlie", gpu_type=a100, gpu_count=2, nics=[])

    def hostnames(**params):
        response = viewer_api.get(f"{API}/machines/", params)
        assert response.status_code == 200
        return [row["hostname"] for row in response.json()["results"]]

    assert hostnames(gpu_type="a100-80g-sxm", ordering="-gpu_count") == ["bravo", "charlie"]
    assert hostnames(has_data_nic="false") == ["charlie"]
    assert hostnames(q="alp") == ["alpha"]
    assert hostnames(limit=1, offset=1) == ["bravo"]


def test_list_filter_with_bad_value_is_400(viewer_api):
    response = viewer_api.get(f"{API}/machines/", {"status": "exploded"})

    assert response.status_code == 400
    assert "status" in response.json()


def test_nic_list_filters_by_machine(viewer_api):
    machine = MachineFactory()
    MachineFactory()

    response = viewer_api.get(f"{API}/nics/", {"machine": machine.pk, "role": "data"})

    assert [row["name"] for row in response.json()["results"]] == ["eth1"]


def test_fleet_summary_endpoint(viewer_api):
    MachineFactory(gpu_count=8)
    MachineFactory(hostname="bare", gpu_count=4, nics=[])

    body = viewer_api.get(f"{API}/fleet-summary/").json()

    assert (body["machines"], body["gpus"], body["gpu_memory_gib"]) == (2, 12, 960.0)
    assert body["machines_without_data_nic"][0]["hostname"] == "bare"


def test_pool_delete_keeps_machines(planner_api):
    pool = PoolFactory()
    machine = MachineFactory(pool=pool)

    assert planner_api.delete(f"{API}/pools/{pool.pk}/").status_code == 204
    machine.refresh_from_db()
    assert machine.pool is None
    assert NetworkInterface.objects.filter(machine=machine).count() == 2


def test_openapi_schema_for_the_inventory_generates_and_validates():
    from django.urls import include, path
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.validation import validate_schema

    patterns = [path("api/v1/inventory/", include("inventory.api_urls"))]
    schema = SchemaGenerator(patterns=patterns).get_schema(public=True)

    validate_schema(schema)
    paths = schema["paths"]
    assert "/api/v1/inventory/model-specs/import-config/" in paths
    assert "/api/v1/inventory/fleet-summary/" in paths
    machine_params = {p["name"] for p in paths["/api/v1/inventory/machines/"]["get"]["parameters"]}
    assert {"gpu_type", "pool", "status", "ordering", "q", "limit"} <= machine_params
    assert paths["/api/v1/inventory/machines/"]["get"]["summary"] == "List machines"


def test_delete_model_spec_in_use_is_409(planner_api):
    from inventory.selectors import register_usage_finder, unregister_usage_finder

    spec = ModelSpecFactory()

    def finder(obj):
        return ["plan: in production"] if obj == spec else []

    register_usage_finder(finder)
    try:
        response = planner_api.delete(f"{API}/model-specs/{spec.pk}/")
    finally:
        unregister_usage_finder(finder)

    assert response.status_code == 409
    assert response.json()["used_by"] == ["plan: in production"]
