"""The machines step takes the links a team measured (nccl-tests) and the plan uses them."""

import pytest
from django.urls import reverse

from planner.engine import spec_from_dict
from planner.engine.spec import SpecError
from planner.forms.draft import locate_engine_error
from planner.forms.wizard import MachinesStepForm

pytestmark = pytest.mark.django_db

HYPOTHETICAL = {
    "source": "hypothetical",
    "node_count": "1",
    "gpus_per_node": "4",
    "gpu": "l40s",
    "intra_link": "pcie",
    "inter_node_gbps": "25",
    "inter_node_kind": "ethernet",
}


def test_measured_links_reach_the_spec_and_empty_ones_stay_out():
    form = MachinesStepForm(data={**HYPOTHETICAL, "intra_node_bandwidth_gbs": "11.5"})
    assert form.is_valid(), form.errors
    assert form.spec_part()["network"] == {"intra_node_bandwidth_gbs": 11.5}

    plain = MachinesStepForm(data=HYPOTHETICAL)
    assert plain.is_valid(), plain.errors
    assert "network" not in plain.spec_part()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("intra_node_bandwidth_gbs", "0"),
        ("cross_node_bandwidth_gbs", "-3"),
        ("per_call_latency_us", "fast"),
    ],
)
def test_a_bad_measurement_is_refused_on_its_field(field, value):
    form = MachinesStepForm(data={**HYPOTHETICAL, field: value})
    assert not form.is_valid()
    assert list(form.errors) == [field]


def test_a_measurement_beyond_the_engines_range_is_reported_on_its_field():
    form = MachinesStepForm(data={**HYPOTHETICAL, "intra_node_bandwidth_gbs": "1e9"})
    assert form.is_valid(), form.errors
    with pytest.raises(SpecError) as err:
        spec_from_dict({"model": "llama-3.1-8b", **form.spec_part()})
    (path,) = err.value.errors
    assert locate_engine_error(path) == ("machines", "intra_node_bandwidth_gbs")


def test_engine_errors_on_the_network_land_on_the_machines_step():
    assert locate_engine_error("network.per_call_latency_us") == ("machines", "per_call_latency_us")


def test_a_measured_pcie_ring_changes_the_plan(planner_client):
    planner_client.post(
        reverse("planner:wizard-step", kwargs={"step": "model"}),
        {"model": "llama-3.1-70b", "max_model_len": "8192"},
    )
    precision = planner_client.post(
        reverse("planner:wizard-step", kwargs={"step": "precision"}),
        {
            "weight_dtype": "fp8",
            "kv_cache_dtype": "auto",
            "max_model_len": "8192",
            "gpu_memory_utilization": "0.9",
        },
    )
    assert precision.status_code == 302  # answered: the plan is for FP8 weights
    preview = reverse("planner:wizard-preview", kwargs={"step": "machines"})
    default = planner_client.post(preview, HYPOTHETICAL).context
    measured = planner_client.post(
        preview, {**HYPOTHETICAL, "intra_node_bandwidth_gbs": "40"}
    ).context
    # 70B FP8 on four L40S: at the default PCIe ring the planner keeps two TP 2 pairs; a ring
    # measured at 40 GB/s makes one TP 4 instance worth it.
    assert default["best"].id == "l40s:tp2-pp1-r2:fp8"
    assert measured["best"].id == "l40s:tp4-pp1-r1:fp8"
