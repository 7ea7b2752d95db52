"""`make run`'s demo links the simulated llama-8b server to a plan of the same model."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from benchmarks.demo import DEMO_PLAN_TITLE, DEMO_TARGET
from monitoring.models import Target
from planner.models import Plan
from planner.selectors.plan_values import plan_values

pytestmark = pytest.mark.django_db


def test_the_demo_plan_is_made_once_and_linked_to_the_demo_server(admin_user):
    for command in ("load_catalog", "load_demo", "register_simulator_targets", "load_demo_plan",
                    "load_demo_plan"):  # fmt: skip
        call_command(command, stdout=StringIO())
    plan = Plan.objects.get(title=DEMO_PLAN_TITLE)
    assert plan.author == admin_user
    assert Target.objects.get(name=DEMO_TARGET).plan == plan
    values = plan_values(plan)
    assert values.replica.layout.gpu == "a100-80g-sxm"
    # The simulated server serves the plan's model: a run of it can calibrate the plan.
    from monitoring.reality.server_checks import model_matches

    assert model_matches(("meta-llama/Llama-3.1-8B-Instruct",), values)


def test_without_the_simulator_targets_nothing_is_made():
    out = StringIO()
    call_command("load_demo_plan", stdout=out)
    assert "register_simulator_targets" in out.getvalue()
    assert not Plan.objects.exists()
