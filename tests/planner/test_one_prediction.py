"""One prediction per quantity everywhere (issue 32): the plan page, the API and the Markdown
export show the serving model's prediction with its band, the same numbers; the closed-form
steady state the engine ranks on is never shown beside it."""

import re

import pytest

from planner.presentation.numbers import amount
from planner.selectors import plan_result
from planner.services import plan_create
from tests.planner.conftest import S1_SPEC

pytestmark = pytest.mark.django_db

LEAD_SPEC = {  # the team lead's plan: Llama-3.1-70B on two 8 × A800 servers, with SLOs
    **S1_SPEC,
    "weight_dtype": "bf16",
    "workload": {
        "concurrency": 64,
        "avg_input_tokens": 1200,
        "avg_output_tokens": 512,
        "ttft_slo_ms": 2000,
        "itl_slo_ms": 60,
    },
}


@pytest.fixture
def lead_plan(demo_fleet, planner):
    return plan_create(spec=LEAD_SPEC, actor=planner)


def _text(html: str) -> str:
    html = re.sub(r"<script.*?</script>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


def test_page_api_and_markdown_show_the_same_serving_figures(lead_plan, viewer_client):
    result = plan_result(lead_plan)
    best = result.best
    simulated = [c for c in result.candidates if c.fits and c.serving is not None]
    assert best.serving is not None
    assert len(simulated) >= 2

    page = _text(viewer_client.get(lead_plan.get_absolute_url()).content.decode())
    markdown = viewer_client.get(f"/plans/{lead_plan.public_id}/export.md").content.decode()
    api = viewer_client.get(f"/api/v1/plans/{lead_plan.public_id}/").json()["result"]

    for c in simulated:
        p = c.serving
        for shown in (amount(p.output_tok_s), amount(p.ttft_p50_ms), amount(p.tpot_p50_ms, 1)):
            assert shown in page, (c.label, shown)
            assert shown in markdown, (c.label, shown)
        answered = next(a for a in api["candidates"] if a["id"] == c.id)["prediction"]
        assert answered["output_tok_s"] == round(p.output_tok_s, 1)
        assert answered["ttft_p50_ms"] == round(p.ttft_p50_ms, 1)
        assert answered["ttft_p95_ms"] == round(p.ttft_p95_ms, 1)
        assert answered["tpot_p50_ms"] == round(p.tpot_p50_ms, 2)
        assert answered["band_pct"]["output_tok_s"] > 0
    assert api["recommendation"]["prediction"]["output_tok_s"] == round(
        best.serving.output_tok_s, 1
    )

    # Every figure carries its band, next to it.
    assert f"{amount(best.serving.output_tok_s)} tok/s (±" in page
    assert f"{amount(best.serving.output_tok_s)} (±" in markdown
    # The p95 on the verdict's SLO check is the one the serving table shows.
    assert f"{amount(best.serving.ttft_p95_ms)} ms" in page


def test_the_closed_form_figures_are_never_shown(lead_plan, viewer_client):
    result = plan_result(lead_plan)
    page = _text(viewer_client.get(lead_plan.get_absolute_url()).content.decode())
    markdown = viewer_client.get(f"/plans/{lead_plan.public_id}/export.md").content.decode()

    for c in result.candidates:
        if not c.fits:
            continue
        shown = {amount(c.serving.output_tok_s)} if c.serving else set()
        closed = amount(c.output_throughput_tok_s)
        if closed in shown or c.output_throughput_tok_s < 1000:
            continue  # only four-digit figures, which cannot match another number by chance
        assert f"{closed} tok/s" not in page, c.label
        assert f" {closed} " not in page, c.label
        assert f"≈{closed} output tok/s" not in markdown, c.label
