"""planner/engine/serving/bands.json is what bench/fit_bands.py writes from today's engine.

The bands are the calibration runs' p80 errors, so every change to the serving model moves them;
a file left from an older model shows users bands the model no longer has (it did: the A100
TTFT band read ±4.5 % while the model's p80 had become 9.4 %).
Rewrite it with `.venv/bin/python bench/fit_bands.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.engine.serving.backend import StepBackend
from planner.engine.serving.bands import BANDS_FILE

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fit_bands(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import fit_bands

    return fit_bands


def test_the_roofline_bands_are_the_calibration_runs_p80_under_todays_model(fit_bands):
    stored = json.loads(BANDS_FILE.read_text())["regimes"]
    fresh = fit_bands.residuals(StepBackend.ROOFLINE)
    assert fresh
    for key, errs in fresh.items():
        row = stored[key]
        assert row["runs"] == len(errs["tpot"]), key
        for metric in ("ttft", "tpot", "tok_s"):
            assert row[metric] == fit_bands.p80(errs[metric]), (key, metric)
