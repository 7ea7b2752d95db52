"""Adding a machine like an existing one (issue 30 item 7): the form arrives with every field
and NIC of the original, a hostname of its own to type, and saves a second machine."""

import pytest
from django.urls import reverse

from inventory.models import Machine
from tests.planner.fleet import build_demo_fleet

pytestmark = pytest.mark.django_db


def test_duplicate_prefills_the_form_and_saves_a_new_machine(planner_client):
    original = build_demo_fleet()["a800-01"]
    detail = planner_client.get(original.get_absolute_url()).content.decode()
    assert f"{reverse('inventory:machine-create')}?like={original.pk}" in detail

    page = planner_client.get(reverse("inventory:machine-create"), {"like": original.pk})

    assert page.status_code == 200
    form = page.context["form"]
    assert form.initial["gpu_count"] == 8
    assert form.initial["gpu_type"] == original.gpu_type
    assert "hostname" not in form.initial
    nics = {f.initial.get("name") for f in page.context["formset"].forms}
    assert {"eth1", "eno1"} <= nics
    assert 'data-testid="duplicate-of"' in page.content.decode()
    assert 'value="eth1"' in page.content.decode()

    saved = planner_client.post(
        reverse("inventory:machine-create"),
        {
            **{k: v for k, v in _form_data(page).items()},
            "hostname": "a800-03",
        },
    )
    assert saved.status_code == 302
    copy = Machine.objects.get(hostname="a800-03")
    assert (copy.gpu_count, copy.gpu_type_id) == (8, original.gpu_type_id)
    assert {n.name for n in copy.nics.all()} == {"eth1", "eno1"}


def _form_data(page) -> dict:
    """Return what the browser would post: every field's shown value."""
    data = {}
    form, formset = page.context["form"], page.context["formset"]
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if value is not None:
            data[name] = getattr(value, "pk", value)
    data.update(
        formset.management_form.initial
        and {f"nics-{k}": v for k, v in formset.management_form.initial.items()}
    )
    for i, f in enumerate(formset.forms):
        for key in ("name", "speed_gbps", "kind", "role"):
            if f.initial.get(key) is not None:
                data[f"nics-{i}-{key}"] = f.initial[key]
    return data
