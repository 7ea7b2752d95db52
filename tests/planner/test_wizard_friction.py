"""Wizard friction a team lead met (issue 30, item 7): ticks select machines, the vLLM version
field names its default, the live check reads like the plan page and answers the Ray question,
and the home page offers to plan a deployment."""

import re

import pytest
from django.urls import reverse

from planner.engine.vllm_flags import VLLM_VERSION
from planner.forms.wizard import MachinesStepForm, PrecisionStepForm

pytestmark = pytest.mark.django_db


def test_ticking_machines_selects_them_even_with_the_fleet_chosen(demo_fleet):
    form = MachinesStepForm(data={"source": "fleet", "machines": ["a800-01", "a800-02"]})

    assert form.is_valid(), form.errors
    assert form.spec_part()["hardware"] == {"hostnames": ["a800-01", "a800-02"]}


def test_the_fleet_without_ticks_is_still_the_fleet(demo_fleet):
    form = MachinesStepForm(data={"source": "fleet"})

    assert form.is_valid(), form.errors
    assert form.spec_part()["hardware"] == {"fleet": True}


def test_the_vllm_version_field_names_its_default():
    field = PrecisionStepForm().fields["vllm_version"]

    assert VLLM_VERSION in str(field.help_text)
    assert field.widget.attrs["placeholder"] == VLLM_VERSION


def test_the_live_check_groups_digits_counts_whole_sequences_and_answers_ray(
    demo_fleet, planner_client
):
    planner_client.post(
        reverse("planner:wizard-step", kwargs={"step": "model"}),
        {"model": "llama-3.1-70b", "max_model_len": "8192"},
    )
    response = planner_client.post(
        reverse("planner:wizard-preview", kwargs={"step": "machines"}),
        {"source": "machines", "machines": ["a800-01", "a800-02"]},
    )
    html = response.content.decode()
    kv = re.search(r'data-testid="panel-kv">([^<]*)<', html).group(1)

    best = response.context["best"]
    assert f"{best.kv_tokens_per_replica:,} tokens per replica" in kv
    assert re.search(r": \d+ whole sequences?$", kv.strip()), kv  # never 157.9 sequences
    ray = re.search(r'data-testid="panel-ray">([^<]*)<', html).group(1)
    assert ray.startswith(("No:", "Yes:"))
    speed = response.context["speed"]
    assert speed is not None
    assert f"{speed.output_tok_s:,.0f}" in html  # the serving model's figure, as on the plan


def test_the_home_page_offers_to_plan_a_deployment(planner_client, viewer_client):
    page = planner_client.get(reverse("home")).content.decode()
    assert 'data-testid="plan-cta"' in page
    assert reverse("planner:wizard-start") in page
    assert 'data-testid="plan-cta"' not in viewer_client.get(reverse("home")).content.decode()
