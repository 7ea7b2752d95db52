"""The result page's charts and layouts table: what they show stays on a readable scale."""

import pytest

from planner.services import plan_evaluate
from planner.services.charts import throughput_figure
from tests.planner.conftest import S1_SPEC

pytestmark = pytest.mark.django_db


def test_the_throughput_chart_plots_only_the_simulated_layouts_that_start(demo_fleet):
    # The chart shows the serving model's figures, the ones every page shows: a layout that
    # does not fit never starts, and the closed-form figures of the others only rank them.
    result = plan_evaluate(spec=S1_SPEC).result
    assert any(not c.fits for c in result.candidates)  # S1 rejects some layouts

    traces = throughput_figure(result)["data"]

    plotted = [label for trace in traces for label in trace["text"]]
    simulated = [c for c in result.candidates if c.fits and c.serving is not None]
    assert 2 <= len(plotted) == len(simulated)
    assert max(x for trace in traces for x in trace["x"]) == max(
        c.serving.ttft_p50_ms for c in simulated
    )
    assert max(y for trace in traces for y in trace["y"]) == max(
        c.serving.output_tok_s for c in simulated
    )


def test_the_layouts_table_shows_no_speed_for_layouts_that_do_not_fit(demo_fleet):
    from planner.presenters import candidate_rows

    result = plan_evaluate(spec=S1_SPEC).result

    rejected = [row for row in candidate_rows(result) if not row.c.fits]
    assert rejected
    for row in rejected:
        assert (row.fmt["tok"], row.fmt["ttft"], row.fmt["itl"]) == ("—", "—", "—")
        assert row.fmt["weights"] != "—"  # what it would need is still shown
