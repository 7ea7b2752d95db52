"""Headless Chromium: a target linked to an S1 plan and a decision draws the plan's and the SLO's
lines on its latency charts and the like-for-like KV line, and shows the comparison table."""

from __future__ import annotations

import pytest

from monitoring.models import Target
from planner.decisions.services import decision_create
from planner.selectors.plan_values import plan_values
from tests.monitoring.browser.test_live_dashboards import _wait_for_chart, browser_page  # noqa: F401
from tests.monitoring.simulated import feed_simulated
from tests.monitoring.test_plan_comparison import _replica, s1_plan  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.enable_socket,
    pytest.mark.django_db(transaction=True),
]

LINES = (
    "(sel) => (document.querySelector(sel + ' .chart-plot').layout.annotations || [])"
    ".map(a => a.text)"
)


def test_the_target_page_draws_plan_and_slo_lines(
    browser_page,  # noqa: F811
    live_server,
    make_target,
    s1_plan,  # noqa: F811
    planner,
):
    page, errors = browser_page
    decision = decision_create(
        actor=planner,
        title="llama on a800",
        plan=s1_plan,
        evidence={"ttft_p95": {"threshold": 900}, "itl_p95": {"threshold": 40}},
    )
    target = make_target(name="s1-replica", plan=s1_plan, decision=decision)
    blocks = plan_values(s1_plan).replica.kv_blocks
    feed_simulated(target, _replica("s1", blocks=int(blocks * 0.8)))
    Target.objects.filter(pk=target.pk).update(enabled=False)  # nothing polls the fake URL

    page.goto(live_server.url + target.get_absolute_url())
    for chart in ("#chart-ttft", "#chart-itl", "#chart-kv"):
        _wait_for_chart(page, chart, errors)

    ttft = page.evaluate(LINES, "#chart-ttft")
    itl = page.evaluate(LINES, "#chart-itl")
    kv = page.evaluate(LINES, "#chart-kv")
    assert any(text.startswith("plan's prediction") for text in ttft), ttft
    assert any(text.startswith("SLO p95 900") for text in ttft), ttft
    assert any(text.startswith("SLO p95 40") for text in itl), itl
    assert kv == ["plan's capacity for this replica 125"], kv  # planned ÷ 0.8 × planned
    shapes = page.evaluate(
        "(sel) => document.querySelector(sel + ' .chart-plot').layout.shapes.map(s => s.line.dash)",
        "#chart-ttft",
    )
    assert sorted(shapes) == ["dash", "solid"]
    row = page.locator("tr[data-quantity='kv_blocks']")
    assert "deviation-out" in (row.get_attribute("class") or "")
    assert "-20" in row.inner_text()
    assert errors == []


def test_the_profile_page_draws_measured_before_and_after(
    browser_page,  # noqa: F811
    live_server,
    make_target,
    s1_plan,  # noqa: F811
    planner,
):
    from monitoring.reality.calibration import calibration_create
    from monitoring.selectors import resolve_range

    page, errors = browser_page
    blocks = plan_values(s1_plan).replica.kv_blocks
    targets = []
    for name, seed in (("a", 1), ("b", 2)):
        target = make_target(name=f"s1-{name}", plan=s1_plan, enabled=False)
        feed_simulated(target, _replica(name, blocks=blocks, seed=seed))
        targets.append(target)
    start, end = resolve_range("1h")
    profile = calibration_create(targets=targets, start=start, end=end, actor=planner)

    page.goto(live_server.url + profile.get_absolute_url())
    page.wait_for_selector("[data-calibration-chart='itl_ms'][data-drawn]", timeout=30_000)

    names = page.evaluate(
        "() => document.querySelector(\"[data-calibration-chart='itl_ms']\").data.map(t => t.name)"
    )
    assert names == ["measured", "predicted before calibration", "predicted after calibration"]
    assert errors == []
