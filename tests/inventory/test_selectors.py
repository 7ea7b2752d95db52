"""Reads the planner relies on, and the fleet summary figures."""

import pytest

from catalog import Architecture
from inventory import selectors
from inventory.models import MachineStatus
from tests.inventory.factories import GpuTypeFactory, MachineFactory, ModelSpecFactory, PoolFactory

pytestmark = pytest.mark.django_db


def nic(name, gbps, role="data", kind="ethernet"):
    return {"name": name, "speed_gbps": gbps, "role": role, "kind": kind}


def test_fastest_data_nic_ignores_management_nics():
    machine = MachineFactory(
        nics=[nic("eno1", 100, role="management"), nic("eth1", 25), nic("ib0", 200, kind="roce")]
    )

    assert selectors.fastest_data_nic(machine).name == "ib0"


def test_fastest_data_nic_is_none_without_a_data_nic():
    machine = MachineFactory(nics=[nic("eno1", 1, role="management")])

    assert selectors.fastest_data_nic(machine) is None


def test_link_speed_between_two_machines_is_the_slower_fastest_data_nic():
    a = MachineFactory(nics=[nic("eth1", 25), nic("ib0", 100)])
    b = MachineFactory(nics=[nic("eth1", 25)])
    lonely = MachineFactory(nics=[])

    assert selectors.link_speed_gbps(a, b) == 25
    assert selectors.link_speed_gbps(a, lonely) is None


def test_machine_list_loads_gpu_type_pool_and_nics_in_two_queries(
    django_assert_num_queries,
):
    for _ in range(10):
        MachineFactory()

    with django_assert_num_queries(2):
        machines = list(selectors.machine_list())
        for machine in machines:
            _ = machine.gpu_type.memory_gib, machine.pool.name
            selectors.fastest_data_nic(machine)

    assert len(machines) == 10


def test_model_spec_architecture_round_trips_into_the_catalog_type():
    spec = ModelSpecFactory()

    arch = selectors.model_spec_architecture(spec)

    assert isinstance(arch, Architecture)
    assert (arch.num_layers, arch.num_kv_heads, arch.head_dim) == (32, 8, 128)


def test_fleet_summary_figures():
    a800 = GpuTypeFactory(a800=True)
    a100 = GpuTypeFactory(a100=True)
    small = GpuTypeFactory(rtx4090=True)
    dedicated = PoolFactory(name="dedicated")
    shared = PoolFactory(name="shared", kind="shared")
    MachineFactory(gpu_type=a800, gpu_count=8, pool=dedicated)
    MachineFactory(gpu_type=a800, gpu_count=8, pool=dedicated)
    MachineFactory(gpu_type=a100, gpu_count=4, pool=shared)
    MachineFactory(gpu_type=a100, gpu_count=4, pool=shared, status=MachineStatus.MAINTENANCE)
    MachineFactory(hostname="lab", gpu_type=small, gpu_count=1, pool=None, nics=[])
    MachineFactory(gpu_type=a100, gpu_count=8, pool=shared, status=MachineStatus.RETIRED)

    summary = selectors.fleet_summary()

    assert summary.machines == 5
    assert summary.gpus == 25
    assert summary.gpu_memory_gib == 24 * 80 + 24
    assert summary.retired_machines == 1
    by_type = {row.key: (row.machines, row.gpus, row.gpu_memory_gib) for row in summary.by_gpu_type}
    assert by_type == {
        "a800-80g-sxm": (2, 16, 1280.0),
        "a100-80g-sxm": (2, 8, 640.0),
        "rtx-4090": (1, 1, 24.0),
    }
    by_pool = {row.key: (row.machines, row.gpus) for row in summary.by_pool}
    assert by_pool == {"dedicated": (2, 16), "shared": (2, 8), "": (1, 1)}
    by_status = {row.key: (row.machines, row.gpus) for row in summary.by_status}
    assert by_status == {"active": (4, 21), "maintenance": (1, 4), "retired": (1, 8)}
    assert [m.hostname for m in summary.machines_without_data_nic] == ["lab"]


def test_fleet_summary_of_an_empty_fleet():
    summary = selectors.fleet_summary()

    assert (summary.machines, summary.gpus, summary.gpu_memory_gib) == (0, 0, 0.0)
    assert summary.machines_without_data_nic == []
