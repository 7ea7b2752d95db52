"""Issue 33 item 4: every stored hardware figure is within the bounds the planner enforces
(catalog/bounds.py), at the model and the API level, and the fleet summary never fails."""

import pytest
from django.core.exceptions import ValidationError

from catalog.bounds import (
    GPU_BANDWIDTH_GBS_MAX,
    GPU_MEMORY_GIB_MAX,
    GPU_TFLOPS_MAX,
    NIC_SPEED_GBPS_MAX,
)
from inventory.models import GpuType, NetworkInterface
from planner.engine.spec import SpecError, spec_from_dict
from tests.inventory.factories import GpuTypeFactory, MachineFactory, NetworkInterfaceFactory

pytestmark = pytest.mark.django_db

API = "/api/v1/inventory"
GPU_FIGURES = {
    "memory_gib": GPU_MEMORY_GIB_MAX,
    "driver_visible_gib": GPU_MEMORY_GIB_MAX,
    "hbm_bandwidth_gbs": GPU_BANDWIDTH_GBS_MAX,
    "bf16_dense_tflops": GPU_TFLOPS_MAX,
    "nvlink_bandwidth_gbs": GPU_BANDWIDTH_GBS_MAX,
}


@pytest.mark.parametrize("field", sorted(GPU_FIGURES))
@pytest.mark.parametrize("catalog", [False, True], ids=["user", "catalog"])
def test_a_gpu_figure_beyond_the_engines_bound_is_400_naming_it(planner_api, field, catalog):
    gpu = GpuTypeFactory(a800=True, source="catalog" if catalog else "")

    response = planner_api.patch(f"{API}/gpu-types/{gpu.pk}/", {field: 1e308}, format="json")

    assert response.status_code == 400
    assert field in response.json()
    assert GpuType.objects.get(pk=gpu.pk).memory_gib < GPU_MEMORY_GIB_MAX


@pytest.mark.parametrize("field", sorted(GPU_FIGURES))
def test_the_bound_itself_is_stored(planner_api, field):
    gpu = GpuTypeFactory(a800=True)
    change = {field: GPU_FIGURES[field]}
    if field == "driver_visible_gib":
        change["memory_gib"] = GPU_MEMORY_GIB_MAX  # the visible part is at most the memory

    response = planner_api.patch(f"{API}/gpu-types/{gpu.pk}/", change, format="json")

    assert response.status_code == 200, response.json()


def test_the_model_refuses_a_figure_beyond_the_bound():
    gpu = GpuTypeFactory.build(a800=True, memory_gib=1e308)

    with pytest.raises(ValidationError) as caught:
        gpu.full_clean()

    assert "memory_gib" in caught.value.message_dict


def test_a_nic_speed_beyond_the_bound_is_400_on_both_endpoints(planner_api):
    machine = MachineFactory()
    nic = NetworkInterfaceFactory(machine=machine, name="eth7")

    direct = planner_api.patch(f"{API}/nics/{nic.pk}/", {"speed_gbps": 1e308}, format="json")
    nested = planner_api.patch(
        f"{API}/machines/{machine.pk}/",
        {"nics": [{"name": "eth1", "speed_gbps": NIC_SPEED_GBPS_MAX * 2}]},
        format="json",
    )

    assert direct.status_code == 400
    assert "speed_gbps" in direct.json()
    assert nested.status_code == 400
    assert "nics" in nested.json()
    assert NetworkInterface.objects.get(pk=nic.pk).speed_gbps < NIC_SPEED_GBPS_MAX


def test_the_fleet_summary_survives_a_figure_stored_before_the_bounds(viewer_api):
    gpu = GpuTypeFactory(a800=True)
    MachineFactory(gpu_type=gpu, gpu_count=8)
    GpuType.objects.filter(pk=gpu.pk).update(memory_gib=1e308)  # bypasses validation, as old rows

    response = viewer_api.get(f"{API}/fleet-summary/")

    assert response.status_code == 200
    assert response.json()["gpu_memory_gib"] == 8 * GPU_MEMORY_GIB_MAX


@pytest.mark.parametrize("nics", [5, -1, 1e308, "eth0", {"name": "eth0"}])
def test_the_engine_refuses_nics_that_are_not_a_list(nics):
    spec = {
        "model": "qwen2.5-7b",
        "hardware": {"nodes": [{"gpu": "a100-80g-sxm", "gpu_count": 8, "nics": nics}]},
    }

    with pytest.raises(SpecError) as caught:
        spec_from_dict(spec)

    assert "hardware.nodes[0].nics" in caught.value.errors


@pytest.mark.parametrize("nics", [5, -1, 1e308])
def test_evaluate_with_nics_not_a_list_is_400_naming_the_field(viewer_api, nics):
    spec = {
        "model": "qwen2.5-7b",
        "hardware": {"nodes": [{"gpu": "a100-80g-sxm", "gpu_count": 8, "nics": nics}]},
    }

    response = viewer_api.post("/api/v1/plans/evaluate/", spec, format="json")

    assert response.status_code == 400
    assert "hardware.nodes[0].nics" in response.json()


def test_the_engine_refuses_an_nvlink_figure_beyond_the_bound():
    spec = {
        "model": "qwen2.5-7b",
        "hardware": {
            "nodes": [{"gpu": {"slug": "a100-80g-sxm", "nvlink_gbs": 1e308}, "gpu_count": 8}]
        },
    }

    with pytest.raises(SpecError) as caught:
        spec_from_dict(spec)

    assert "hardware.nodes[0].gpu.nvlink_gbs" in caught.value.errors


@pytest.mark.parametrize("nics", [[{}], [{"name": "eth1"}], [{"speed_gbps": 25}]])
def test_patching_a_machine_with_incomplete_nics_is_400(planner_api, nics):
    machine = MachineFactory()

    response = planner_api.patch(f"{API}/machines/{machine.pk}/", {"nics": nics}, format="json")

    assert response.status_code == 400
    assert "nics" in response.json()
