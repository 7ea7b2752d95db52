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


def _nothing_fits_plan(planner_api):
    build_demo_fleet()
    response = planner_api.post("/api/v1/plans/", {"spec": NOTHING_FITS}, format="json")
    assert response.status_code == 201, response.content
    return Plan.objects.get()


def test_a_plan_where_nothing_fits_offers_no_download(planner_api, planner_client):
    plan = _nothing_fits_plan(planner_api)

    page = planner_client.get(plan.get_absolute_url()).content.decode()

    assert 'data-testid="download-configs"' not in page
    assert 'data-testid="candidate-bundle-form"' not in page


def test_the_bundle_of_a_candidate_that_does_not_fit_is_a_400_saying_so(
    planner_api, planner_client
):
    plan = _nothing_fits_plan(planner_api)
    candidate = plan.result["candidates"][0]
    assert not candidate["fits"]
    assert candidate["hosts"]
    zip_url = f"/plans/{plan.public_id}/export.zip"

    default = planner_client.get(zip_url)
    chosen = planner_client.get(zip_url, {"candidate": candidate["id"]})
    api = planner_api.get(
        f"/api/v1/plans/{plan.public_id}/configs/", {"candidate": candidate["id"]}
    )

    assert default.status_code == 400
    assert chosen.status_code == 400
    assert "does not fit the offered GPUs" in chosen.content.decode()
    assert api.status_code == 400
    assert "does not fit" in str(api.json())
