"""The result page reads a plan in a fixed, small number of queries, and legacy snapshots (saved
before the result contract, even with whole sections missing) still render."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from planner.models import Plan
from planner.services import plan_create

pytestmark = pytest.mark.django_db


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


def test_result_and_compare_pages_use_a_fixed_number_of_queries(
    demo_fleet, planner, planner_client, s2a_spec, s1_spec
):
    small = plan_create(spec=s2a_spec, actor=planner)
    large = plan_create(spec=s1_spec, actor=planner)

    detail_small = _queries(planner_client, small.get_absolute_url())
    detail_large = _queries(planner_client, large.get_absolute_url())
    compare = _queries(planner_client, f"/plans/compare/?a={small.public_id}&b={large.public_id}")

    assert detail_small == detail_large  # does not grow with candidates, reasons or pitfalls
    assert detail_small <= 12
    assert compare <= 12


def test_a_legacy_snapshot_without_candidates_still_renders(planner, planner_client):
    plan = Plan(
        title="old snapshot",
        author=planner,
        spec={},
        engine_input={},
        result={"recommendation": {"route": "A", "tp": 2, "pp": 1, "replicas": 2}},
        engine_version="0.9.0",
        model_name="Some model",
        route="A",
        tp=2,
        pp=1,
        replicas=2,
        executor_backend="mp",
        pool_kind="dedicated",
        hostnames=["h1", "h2"],
    )
    plan.save()

    response = planner_client.get(plan.get_absolute_url())

    assert response.status_code == 200
    assert "TP2×PP1×2" in response.content.decode()


def test_the_result_section_renders_once_per_language_for_every_reader(
    demo_fleet, planner, planner_client, viewer_client, s2a_spec, monkeypatch
):
    from django.test import override_settings

    from planner.views import plans

    plan = plan_create(spec=s2a_spec, actor=planner)
    renders = []
    real = plans.result_context
    monkeypatch.setattr(plans, "result_context", lambda *a, **k: renders.append(1) or real(*a, **k))

    first = planner_client.get(plan.get_absolute_url()).content.decode()
    again = viewer_client.get(plan.get_absolute_url()).content.decode()
    assert len(renders) == 1
    with override_settings(LANGUAGE_CODE="zh-hans"):
        chinese = viewer_client.get(plan.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert len(renders) == 2
    assert chinese.content.decode() != again

    # The cached section is what an uncached render gives, and it keeps the reader's own parts.
    section = plans.render_to_string(
        plans.RESULT_TEMPLATE,
        {"plan": plan, **real(plans.plan_result(plan), engine_input=plan.engine_input)},
    )
    assert section.strip()[:200] in first
    assert section.strip()[-200:] in again
    assert "plan-rerun" not in section
    assert "/rerun/" in first  # a planner may re-run
    assert "/rerun/" not in again  # a viewer may not
