"""The compare page names signals and pitfalls in words, not by their ids."""

import json
from pathlib import Path

from django.template.loader import render_to_string
from django.utils import translation

from planner.engine.result import PlanResult
from planner.presentation.compare import compare_results

FIXTURES = Path(__file__).parent / "engine" / "fixtures" / "results"


def _result(name: str) -> PlanResult:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return PlanResult.from_dict(data["result"])


def test_changed_signals_and_pitfalls_are_shown_in_words():
    with translation.override("en"):
        comparison = compare_results(
            left_result=_result("v2_route_a.json"), right_result=_result("v2_route_c.json")
        )
        html = render_to_string("planner/partials/diff_table.html", {"comparison": comparison})

    assert comparison.signals_changed
    assert comparison.pitfall_rows()
    assert "sig_" not in html
    assert "pit_" not in html
    assert "Several models share one GPU pool" in html
    assert comparison.to_dict()["signals"][0]["key"].startswith("sig_")  # the API keeps ids
