"""What if on machine count and GPU type: the change reaches the engine, and says so."""

import pytest

from planner.forms.whatif import WhatIfForm
from planner.selectors import plan_result
from planner.services import plan_create, plan_evaluate

pytestmark = pytest.mark.django_db


def _changed(plan, data):
    form = WhatIfForm(data)
    assert form.is_valid(), form.errors
    return form, form.changed_spec(plan.spec)


def test_more_machines_adds_hypothetical_copies(demo_fleet, planner, s2a_spec):
    plan = plan_create(spec=s2a_spec, actor=planner)
    form, spec = _changed(plan, {"machine_count": "4"})

    evaluation = plan_evaluate(spec=spec)

    nodes = evaluation.engine_input["hardware"]["nodes"]
    assert len(nodes) == 4
    assert nodes[-1]["hostname"].endswith("-what-if-2")
    assert evaluation.result.node_selection.nodes_offered == 4
    assert ("Number of machines", "4") in form.describe()


def test_fewer_machines_keep_the_first(demo_fleet, planner, s2a_spec):
    plan = plan_create(spec=s2a_spec, actor=planner)
    _form, spec = _changed(plan, {"machine_count": "1"})

    evaluation = plan_evaluate(spec=spec)

    assert [n["hostname"] for n in evaluation.engine_input["hardware"]["nodes"]] == ["a100-01"]
    assert plan_result(plan).node_selection.nodes_offered == 2
    assert evaluation.result.node_selection.nodes_offered == 1  # the engine saw one machine
    assert set(evaluation.result.hosts) <= {"a100-01"}


def test_another_gpu_type_changes_the_memory_budget(demo_fleet, planner, s2a_spec):
    plan = plan_create(spec=s2a_spec, actor=planner)
    _form, spec = _changed(plan, {"gpu": "h100-sxm"})

    evaluation = plan_evaluate(spec=spec)

    assert evaluation.result.best.gpu == "h100-sxm"
    assert plan_result(plan).best.gpu != "h100-sxm"


def test_a_machine_count_out_of_range_names_the_field():
    form = WhatIfForm({"machine_count": "0"})

    assert not form.is_valid()
    assert "machine_count" in form.errors
