"""Every plan page reads the database in a fixed, small number of queries: the count does not
grow with the number of plans listed or with the size of a plan (N+1 reads fail here)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from planner.services import plan_create

pytestmark = pytest.mark.django_db


def _queries(client, url: str, params: dict | None = None, status: int = 200) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url, params or {})
    assert response.status_code == status, response.content[:300]
    return len(ctx.captured_queries)


@pytest.fixture
def plans(demo_fleet, planner, s1_spec, s2a_spec):
    small = plan_create(spec=s2a_spec, actor=planner)
    large = plan_create(spec=s1_spec, actor=planner)
    return small, large


@pytest.mark.parametrize("url", ["/plans/", "/api/v1/plans/"])
def test_plan_lists_do_not_grow_with_the_plans_listed(
    plans, planner, planner_client, url, s2a_spec
):
    two = _queries(planner_client, url)
    for _ in range(6):
        plan_create(spec=s2a_spec, actor=planner)

    eight = _queries(planner_client, url)

    assert eight == two
    assert two <= 10


def test_the_what_if_page_does_not_grow_with_the_plan(plans, planner_client):
    small, large = plans
    change = {"concurrency": "64"}

    on_small = _queries(planner_client, f"/plans/{small.public_id}/what-if/", change)
    more_machines = _queries(
        planner_client, f"/plans/{small.public_id}/what-if/", {**change, "machine_count": "8"}
    )
    on_large = _queries(planner_client, f"/plans/{large.public_id}/what-if/", change)

    assert more_machines == on_small  # hypothetical machines are never read from the database
    # The saved plan, the session and user, the form's calibration profiles, and resolving the
    # spec again: the model, the machines with their NICs, and the pool when the spec names one
    # (the small plan's; the large one names hostnames).
    assert on_large <= on_small <= 10


@pytest.mark.parametrize("fmt", ["md", "json", "zip"])
def test_exports_read_the_plan_once(plans, planner_client, fmt):
    small, large = plans

    counts = {_queries(planner_client, f"/plans/{plan.public_id}/export.{fmt}") for plan in plans}

    assert len(counts) == 1
    assert counts.pop() <= 6


def test_the_api_detail_and_rules_pages_are_fixed(plans, planner_client):
    small, large = plans

    detail = {_queries(planner_client, f"/api/v1/plans/{p.public_id}/") for p in plans}
    rules = _queries(planner_client, "/plans/rules/")

    assert len(detail) == 1
    assert detail.pop() <= 6
    assert rules <= 4
