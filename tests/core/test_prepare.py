"""`manage.py prepare` sets up everything `make run` needs, and a second run changes nothing."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from inventory.models import GpuType, Machine, ModelSpec

pytestmark = pytest.mark.django_db


def test_prepare_loads_catalog_demo_and_admin_once():
    first = io.StringIO()
    call_command("prepare", stdout=first)
    counts = (GpuType.objects.count(), ModelSpec.objects.count(), Machine.objects.count())

    second = io.StringIO()
    call_command("prepare", stdout=second)

    gpu_types, model_specs, machines = counts
    assert gpu_types >= 18
    assert model_specs >= 17
    assert machines == 5
    assert (GpuType.objects.count(), ModelSpec.objects.count(), Machine.objects.count()) == counts
    assert "password:" in first.getvalue()
    assert "password:" not in second.getvalue()
    assert "collectstatic" not in second.getvalue()  # static sources unchanged: not collected
    assert get_user_model().objects.filter(is_superuser=True).count() == 1
