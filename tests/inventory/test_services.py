"""Writes through the services: history with the user, NIC sync, in-use deletes."""

import pytest

from inventory import services
from inventory.models import GpuType, Machine, ModelSpec, NetworkInterface, Pool
from tests.inventory.factories import (
    GpuTypeFactory,
    MachineFactory,
    ModelSpecFactory,
    PoolFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def test_machine_create_records_the_acting_user_in_history():
    user = UserFactory(username="pat")
    gpu = GpuTypeFactory(a800=True)

    machine = services.machine_create(
        actor=user,
        hostname="Gpu-01",
        gpu_type=gpu,
        gpu_count=8,
        interconnect="nvlink",
        tags="prod, a800 prod",
        nics=[{"name": "eth1", "speed_gbps": 25}],
    )

    assert machine.hostname == "gpu-01"
    assert machine.tags == "prod,a800"
    record = machine.history.get()
    assert record.history_type == "+"
    assert record.history_user == user
    assert machine.nics.get().history.get().history_user == user


def test_machine_update_syncs_nics_by_name_without_touching_unchanged_ones():
    machine = MachineFactory()  # eth1 25 GbE data + eno1 management
    eth1 = machine.nics.get(name="eth1")

    services.machine_update(
        machine=machine,
        gpu_count=4,
        nics=[
            {"name": "eth1", "speed_gbps": 25.0, "kind": "ethernet", "role": "data"},
            {"name": "ib0", "speed_gbps": 200, "kind": "infiniband", "role": "data"},
        ],
    )

    names = sorted(machine.nics.values_list("name", flat=True))
    assert names == ["eth1", "ib0"]
    assert machine.nics.get(name="eth1").pk == eth1.pk
    assert not eth1.history.filter(history_type="~").exists()  # unchanged: no history row
    assert Machine.objects.get(pk=machine.pk).gpu_count == 4


def test_update_of_a_catalog_row_marks_it_user_modified():
    gpu = GpuTypeFactory()
    spec = ModelSpecFactory()

    services.gpu_type_update(gpu_type=gpu, memory_gib=81)
    services.model_spec_update(model_spec=spec, num_layers=40)

    assert GpuType.objects.get(pk=gpu.pk).user_modified
    spec = ModelSpec.objects.get(pk=spec.pk)
    assert spec.user_modified
    assert spec.total_params > 8_030_261_248  # recomputed for 40 layers


def test_deleting_a_gpu_type_in_use_is_refused_with_the_machines_using_it():
    gpu = GpuTypeFactory(a800=True)
    MachineFactory(hostname="a800-node-1", gpu_type=gpu)
    MachineFactory(hostname="a800-node-2", gpu_type=gpu)

    with pytest.raises(services.InUseError) as excinfo:
        services.gpu_type_delete(gpu_type=gpu)

    assert excinfo.value.usages == ["machine: a800-node-1", "machine: a800-node-2"]
    assert GpuType.objects.filter(pk=gpu.pk).exists()


def test_deleting_an_unused_gpu_type_works_and_is_kept_in_history():
    gpu = GpuTypeFactory()
    gpu_id = gpu.pk
    user = UserFactory()

    services.gpu_type_delete(gpu_type=gpu, actor=user)

    assert not GpuType.objects.filter(pk=gpu_id).exists()
    assert GpuType.history.filter(id=gpu_id, history_type="-").get().history_user == user


@pytest.fixture
def plans_use_model_specs():
    """A usage finder like the planner's: saved plans refer to model specs by slug."""
    from inventory.selectors import register_usage_finder, unregister_usage_finder

    def finder(obj):
        if isinstance(obj, ModelSpec) and obj.slug == "llama-3.1-8b":
            return ["plan: 8B on A800"]
        return []

    register_usage_finder(finder)
    yield
    unregister_usage_finder(finder)


def test_deleting_a_model_spec_in_use_is_refused(plans_use_model_specs):
    spec = ModelSpecFactory(slug="llama-3.1-8b")
    unused = ModelSpecFactory(slug="unused")

    with pytest.raises(services.InUseError) as excinfo:
        services.model_spec_delete(model_spec=spec)
    services.model_spec_delete(model_spec=unused)

    assert excinfo.value.usages == ["plan: 8B on A800"]
    assert list(ModelSpec.objects.values_list("slug", flat=True)) == ["llama-3.1-8b"]


def test_deleting_a_pool_keeps_its_machines_without_a_pool():
    pool = PoolFactory(name="prod")
    machine = MachineFactory(pool=pool)

    services.pool_delete(pool=pool)

    assert not Pool.objects.exists()
    machine.refresh_from_db()
    assert machine.pool is None
    assert machine.history.filter(history_type="~").count() == 1


def test_deleting_a_machine_deletes_its_nics():
    machine = MachineFactory()

    services.machine_delete(machine=machine)

    assert not NetworkInterface.objects.exists()


def test_set_status_changes_only_the_machines_that_differ():
    a = MachineFactory(status="active")
    b = MachineFactory(status="maintenance")

    changed = services.machines_set_status(machines=[a, b], status="maintenance")

    assert changed == 1
