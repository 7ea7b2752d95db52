"""A model that fits no layout of the machines given is an answer to save and show, not a 500."""

import pytest

from planner.models import Plan, Route
from tests.planner.fleet import SMALL_HOST, build_demo_fleet

pytestmark = pytest.mark.django_db

NOTHING_FITS = {
    "model": "llama-3.1-405b",
    "weight_dtype": "bf16",
    "max_model_len": 8192,
    "workload": {"concurrency": 32, "avg_input_tokens": 1024, "avg_output_tokens": 256},
    "hardware": {"hostnames": [SMALL_HOST]},  # one 24 GB card
}


def test_a_plan_where_nothing_fits_is_saved_and_its_page_says_so(planner_api, planner_client):
    build_demo_fleet()

    response = planner_api.post("/api/v1/plans/", {"spec": NOTHING_FITS}, format="json")

    assert response.status_code == 201, response.content
    plan = Plan.objects.get()
    assert plan.route == Route.NONE
    page = planner_client.get(plan.get_absolute_url())
    assert page.status_code == 200
    assert "No layout on the offered machines starts" in page.content.decode()
    assert plan.title == "Llama-3.1-405B-Instruct · nothing fits"
