"""The result page's charts and layouts table: what they show stays on a readable scale."""

import pytest

from planner.services import plan_evaluate
from planner.services.charts import throughput_figure
from tests.planner.conftest import S1_SPEC

pytestmark = pytest.mark.django_db


def test_the_throughput_chart_plots_only_layouts_that_start(demo_fleet):
    result = plan_evaluate(spec=S1_SPEC).result
    assert any(not c.fits for c in result.candidates)  # S1 rejects some layouts

    traces = throughput_figure(result)["data"]

    plotted = [label for trace in traces for label in trace["text"]]
    fitting = [c for c in result.candidates if c.fits]
    assert len(plotted) == len(fitting)
    assert max(x for trace in traces for x in trace["x"]) == max(c.ttft_ms for c in fitting)


def test_the_layouts_table_shows_no_speed_for_layouts_that_do_not_fit(demo_fleet):
    from planner.presenters import candidate_rows

    result = plan_evaluate(spec=S1_SPEC).result

    rejected = [row for row in candidate_rows(result) if not row.c.fits]
    assert rejected
    for row in rejected:
        assert (row.fmt["tok"], row.fmt["ttft"], row.fmt["itl"]) == ("—", "—", "—")
        assert row.fmt["weights"] != "—"  # what it would need is still shown
