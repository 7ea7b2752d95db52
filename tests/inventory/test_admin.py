"""Django admin for every inventory model, writing through the services."""

import pytest
from django.urls import reverse

from inventory.models import GpuType, ModelSpec
from tests.inventory.factories import GpuTypeFactory, MachineFactory, ModelSpecFactory

pytestmark = pytest.mark.django_db

MODELS = ["gputype", "pool", "machine", "networkinterface", "modelspec", "machineimportbatch"]


@pytest.mark.parametrize("model", MODELS)
def test_admin_changelist_and_add_pages_load(admin_client_, model):
    MachineFactory()
    ModelSpecFactory()

    assert admin_client_.get(reverse(f"admin:inventory_{model}_changelist")).status_code == 200
    assert admin_client_.get(reverse(f"admin:inventory_{model}_add")).status_code == 200


def test_admin_edit_of_a_catalog_row_records_the_user_and_protects_it(admin_client_, admin_user):
    spec = ModelSpecFactory()
    url = reverse("admin:inventory_modelspec_change", args=[spec.pk])
    form = admin_client_.get(url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    data.update(num_layers=16, tie_word_embeddings="", attention_bias="", qk_norm="")
    data.pop("router_bias", None)

    response = admin_client_.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    spec = ModelSpec.objects.get(pk=spec.pk)
    assert spec.user_modified
    assert spec.num_layers == 16
    assert spec.history.latest().history_user == admin_user


def test_admin_refuses_to_delete_a_gpu_type_in_use(admin_client_):
    gpu = GpuTypeFactory()
    MachineFactory(hostname="still-here", gpu_type=gpu)
    url = reverse("admin:inventory_gputype_delete", args=[gpu.pk])

    response = admin_client_.post(url, {"post": "yes"})

    assert b"still-here" in response.content
    assert GpuType.objects.filter(pk=gpu.pk).exists()


def test_admin_status_action_goes_through_the_service(admin_client_, admin_user):
    machine = MachineFactory()

    admin_client_.post(
        reverse("admin:inventory_machine_changelist"),
        {"action": "mark_maintenance", "_selected_action": [machine.pk]},
    )

    machine.refresh_from_db()
    assert machine.status == "maintenance"
    assert machine.history.latest().history_user == admin_user
