"""Uncertainty bands from the calibration residuals (planner/engine/serving/bands.py)."""

import json

from planner.engine import plan, spec_from_dict
from planner.engine.serving.bands import BANDS_FILE, MIN_RUNS, band_for, regime

TABLE = json.loads(BANDS_FILE.read_text())
CALIBRATED = regime(
    generation="ampere", moe=False, dtype="bf16", arrival="burst", backend="roofline"
)


def test_a_calibrated_regime_carries_its_own_p80_error():
    row = TABLE["regimes"][CALIBRATED]
    assert row["runs"] >= MIN_RUNS
    band = band_for(CALIBRATED)
    assert band.tpot == max(row["tpot"], TABLE["floor"]["tpot"])
    assert band.tok_s == max(row["tok_s"], TABLE["floor"]["tok_s"])
    assert f"{row['runs']} calibration runs" in band.basis


def test_a_regime_without_calibration_runs_is_wider_and_says_so():
    key = regime(generation="hopper", moe=True, dtype="fp8", arrival="closed", backend="roofline")
    band, known = band_for(key), band_for(CALIBRATED)
    assert band.tpot > known.tpot
    assert band.tok_s > known.tok_s
    assert band.ttft >= known.ttft
    assert "no calibration runs" in band.basis


def test_every_stored_band_is_a_share_with_runs_behind_it():
    for row in TABLE["regimes"].values():
        assert row["runs"] >= 1
        assert all(0 <= row[k] < 1 for k in ("ttft", "tpot", "tok_s"))


def test_each_prediction_output_carries_its_band():
    spec = {
        "model": "qwen2.5-7b",
        "workload": {
            "arrival": "burst",
            "burst_size": 50,
            "avg_input_tokens": 1024,
            "avg_output_tokens": 256,
        },
        "hardware": {"nodes": [{"hostname": "a", "gpu": "a100-80g-sxm", "gpu_count": 1}]},
    }
    pred = plan(spec_from_dict(spec)).best.serving
    assert "calibration runs" in pred.band_basis
    pairs = [
        (pred.ttft_p50_low_ms, pred.ttft_p50_ms, pred.ttft_p50_high_ms),
        (pred.tpot_p50_low_ms, pred.tpot_p50_ms, pred.tpot_p50_high_ms),
        (pred.e2e_p50_range_ms[0], pred.e2e_p50_ms, pred.e2e_p50_range_ms[1]),
        (pred.output_low_tok_s, pred.output_tok_s, pred.output_high_tok_s),
        (pred.total_range_tok_s[0], pred.total_tok_s, pred.total_range_tok_s[1]),
        (pred.requests_range_per_s[0], pred.requests_per_s, pred.requests_range_per_s[1]),
    ]
    for low, value, high in pairs:
        assert 0 < low < value < high
