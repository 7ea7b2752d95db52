"""The result page shows the serving model's simulated predictions for the leading layouts."""

import re

import pytest
from django.utils.html import escape

from planner.presentation.bands import basis_text
from planner.selectors import plan_result
from planner.services import plan_create


@pytest.fixture
def s1_plan(demo_fleet, planner, s1_spec):
    return plan_create(spec=s1_spec, actor=planner)


def test_result_page_shows_the_simulated_serving_of_the_recommendation(viewer_client, s1_plan):
    page = viewer_client.get(s1_plan.get_absolute_url()).content.decode()
    assert 'data-testid="serving-predictions"' in page
    assert "Predicted serving under your load" in page
    best = plan_result(s1_plan).best
    assert best.serving is not None
    section = page.split('data-testid="serving-predictions"', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r"<tr class=\"best\">(.*?)</tr>", section, re.S)
    assert len(rows) == 1
    # In the reader's locale: thousands grouped ("1,345"), the p50 with its ± band.
    p = best.serving
    pct = round(100 * (p.ttft_p50_ms - p.ttft_p50_low_ms) / p.ttft_p50_ms)
    assert f'{p.ttft_p50_ms:,.0f} <span class="band"' in rows[0]
    assert f"(±{pct} %)</span> / {p.ttft_p95_ms:,.0f}" in rows[0]
    # Where the band comes from: on the figure (title) and once per layout below the table.
    basis = escape(basis_text(p, best.gpu))
    # In words a team lead reads, naming the GPU: no regime keys ("ampere/dense/bf16/…").
    assert basis.startswith(("the model&#x27;s error on", "not yet measured with this setup"))
    assert "/" not in basis
    assert "A800" in basis
    assert f'title="{basis}">' in rows[0]
    assert f"± bands of {best.label}: {basis}." in section
