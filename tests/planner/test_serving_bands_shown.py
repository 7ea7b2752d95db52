"""Each serving output's ± band is shown with where it comes from (planner/presentation/bands.py):
on the result page, in the Markdown export, in English and Chinese."""

import json
from pathlib import Path

import pytest
from django.utils import translation

from planner.engine import plan, spec_from_dict
from planner.engine.result import PlanResult
from planner.presentation.bands import bands, basis_words, markdown_row, with_band
from planner.services.exports import _serving_markdown


def _serving(gpu: str, arrival: str = "burst"):
    workload = {"avg_input_tokens": 1024, "avg_output_tokens": 256, "arrival": arrival}
    if arrival == "burst":
        workload["burst_size"] = 50
    else:
        workload["concurrency"] = 16
    spec = {
        "model": "qwen2.5-7b",
        "workload": workload,
        "hardware": {"nodes": [{"hostname": "a", "gpu": gpu, "gpu_count": 1}]},
    }
    return plan(spec_from_dict(spec)).best.serving


def test_a_calibrated_layout_shows_its_p80_band_and_the_runs_behind_it():
    p = _serving("a100-80g-sxm")
    b = bands(p)
    assert p.band_runs >= 5
    assert b.tpot_pct == round(100 * (p.tpot_p50_ms - p.tpot_p50_low_ms) / p.tpot_p50_ms)
    assert 0 < b.tok_s_pct < 30
    with translation.override("en"):
        text = bands(p, "a100-80g-sxm").basis
    # Plain words: the runs behind the band and the setup, no regime key.
    assert f"{p.band_runs} published benchmark runs like this one" in text
    assert "(A100, a dense model, bf16 weights)" in text
    assert p.band_regime not in text


def test_a_layout_without_calibration_runs_shows_the_wide_band_and_says_why():
    p = _serving("h100-sxm", arrival="closed")
    assert p.band_runs == 0
    with translation.override("en"):
        b = bands(p, "h100-sxm")
        said = basis_words(b)
    assert b.tok_s_pct == 30
    assert b.ttft_pct == 50
    # What a team lead reads next to the number: the band, that it is not measured on this
    # GPU yet, and what narrows it; no regime key such as "hopper/dense/bf16/closed/roofline".
    assert said == (
        "±30 % on throughput and time per token, ±50 % on the first token: not yet measured "
        "with this setup (H100, a dense model, bf16 weights): benchmark it to narrow the band."
    )
    assert p.band_regime not in said
    with translation.override("zh-hans"):
        zh = basis_words(bands(p, "h100-sxm"))
    assert "尚未实测" in zh
    assert "H100" in zh
    assert p.band_regime not in zh


def test_a_figure_reads_with_its_band():
    with translation.override("en"):
        assert with_band("1,234", 8) == "1,234 (±8 %)"
        assert with_band("1,234", 0) == "1,234"


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_markdown_export_lists_each_simulated_layout_with_its_bands(language):
    path = Path(__file__).parent / "engine" / "fixtures" / "results" / "v5_route_a.json"
    result = PlanResult.from_dict(json.loads(path.read_text())["result"])
    simulated = [c for c in result.candidates if c.serving is not None]
    with translation.override(language):
        lines = _serving_markdown(result)
        rows = [markdown_row(c.label, c.serving) for c in simulated]
    assert simulated
    assert lines[-len(rows) :] == rows
    assert all("±" in row for row in rows)
    heading = {"en": "Predicted serving under your load", "zh-hans": "按你的负载预测的服务表现"}
    assert f"## {heading[language]}" in lines
