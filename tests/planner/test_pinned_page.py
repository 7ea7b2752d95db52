"""A pinned layout that cannot be placed, or does not fit, on the result page and in the API
(issue 32): no speeds where it never starts ("—"), why, and what would place it."""

from __future__ import annotations

import json
from pathlib import Path

from django.template.loader import render_to_string
from django.utils import translation

from planner.engine import plan, spec_from_dict
from planner.engine.result import PlanResult
from planner.presentation.api import api_result
from planner.presenters import candidate_rows, result_context

FIXTURES = Path(__file__).parent / "engine" / "fixtures" / "results"


def _stored(name: str) -> tuple[PlanResult, dict]:
    saved = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return PlanResult.from_dict(saved["result"]), saved["spec"]


def _page(result: PlanResult, spec: dict, language: str = "en") -> str:
    with translation.override(language):
        context = {**result_context(result, engine_input=spec), "prefix": ""}
        return "".join(
            render_to_string(name, context)
            for name in ("planner/partials/result.html", "planner/partials/result_details.html")
        )


def test_an_unplaceable_pin_shows_why_and_what_would_place_it():
    result, spec = _stored("v7_pinned_unplaceable")
    row = next(r for r in candidate_rows(result) if r.c.pinned)
    assert row.why.startswith("Not placeable now: it needs room for 1 group of 4 GPUs")
    assert "free 1 GPU on gpu-a to place it" in row.why
    html = _page(result, spec)
    assert "free 1 GPU on gpu-a to place it" in html
    assert "当前无法放置" in _page(result, spec, "zh-hans")


def test_a_pin_that_does_not_fit_renders_no_speed_and_its_reason():
    spec = {
        "model": "llama-3.1-70b",
        "workload": {"concurrency": 8},
        "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 8}]},
        "pinned_layout": {"tp": 1, "pp": 1, "replicas": 1},
    }
    result = PlanResult.from_dict(json.loads(json.dumps(plan(spec_from_dict(spec)).to_dict())))
    row = next(r for r in candidate_rows(result) if r.c.pinned)
    assert row.fmt["tok"] == row.fmt["ttft"] == row.fmt["itl"] == "—"
    assert row.why.startswith("Rejected:")
    html = _page(result, spec)
    assert "it never starts, so it has no speed" in html


def test_the_api_gives_the_pins_placement_notes_in_english():
    result, _ = _stored("v7_pinned_unplaceable")
    pinned = api_result(result)["pinned"]
    assert pinned["placeable"] is False
    assert pinned["placement_reason"]["code"] == "pin_no_room"
    assert pinned["placement_hint"]["text"] == "free 1 GPU on gpu-a to place it"
    assert pinned["ttft_ms"] > 0  # it fits: what it would deliver once placed
