"""Demo machines are marked as such and can be removed in one step (issue 30 item 7): they no
longer mix silently into a team's own inventory."""

import pytest
from django.urls import reverse

from inventory.demo import demo_machines, load_demo
from inventory.models import Machine, Pool
from inventory.services import catalog_load, machine_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet_with_demo():
    catalog_load()
    load_demo()
    own = machine_create(
        hostname="team-gpu-01",
        gpu_type=Machine.objects.first().gpu_type,
        gpu_count=8,
        interconnect="nvlink",
    )
    return own


def test_the_machine_list_marks_the_demo_machines_and_offers_to_remove_them(
    fleet_with_demo, planner_client, viewer_client
):
    page = planner_client.get(reverse("inventory:machine-list")).content.decode()
    assert 'data-testid="demo-machines"' in page
    assert f"{demo_machines().count()} machines here come from the demo data" in page
    assert reverse("inventory:demo-remove") in page
    assert (
        reverse("inventory:demo-remove")
        not in viewer_client.get(reverse("inventory:machine-list")).content.decode()
    )


def test_removing_the_demo_keeps_the_teams_own_machines(fleet_with_demo, planner_client):
    response = planner_client.post(reverse("inventory:demo-remove"))

    assert response.status_code == 302
    assert list(Machine.objects.values_list("hostname", flat=True)) == ["team-gpu-01"]
    assert not demo_machines().exists()
    assert not Pool.objects.exists()  # the demo pools, left empty, went too
    page = planner_client.get(reverse("inventory:machine-list")).content.decode()
    assert 'data-testid="demo-machines"' not in page


def test_a_viewer_cannot_remove_the_demo(fleet_with_demo, viewer_client):
    assert viewer_client.post(reverse("inventory:demo-remove")).status_code == 403
    assert demo_machines().exists()
