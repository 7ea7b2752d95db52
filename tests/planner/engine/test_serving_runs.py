"""The serving model against published vLLM runs (fixtures/serving_runs.json), run by run.

Each run keeps its source and setup; its tolerance is the fixture's default for that metric
unless the run carries its own (with the reason in the fixture). TTFT is compared only where the
fixture says the server's prefix cache state is known (ttft_comparable). Calibration runs fitted
the constants (bench/fit_serving.py); validation runs were never fitted on.
"""

import json
from pathlib import Path

import pytest

from planner.engine.serving.replay import replay

DOC = json.loads((Path(__file__).parent / "fixtures" / "serving_runs.json").read_text())
RUNS = DOC["runs"]
DEFAULT = DOC["tolerance"]


def _tolerance(run, key):
    return run.get("tolerance", {}).get(key, DEFAULT[key])


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r['split'][:3]}-{r['id']}")
def test_run_within_its_tolerance(run):
    pred = replay(run)
    m = run["measured"]
    assert pred.tpot_mean_ms == pytest.approx(m["tpot_mean_ms"], rel=_tolerance(run, "tpot_rel"))
    assert pred.output_tok_s == pytest.approx(
        m["output_tok_s"], rel=_tolerance(run, "output_tok_s_rel")
    )
    if run.get("ttft_comparable", True):
        assert pred.ttft_mean_ms == pytest.approx(
            m["ttft_mean_ms"], rel=_tolerance(run, "ttft_rel")
        )


def test_every_run_states_its_setup_and_source():
    assert len(RUNS) >= 40
    for run in RUNS:
        assert run["source_url"].startswith("https://github.com/")
        assert run["vllm_version"]
        assert run["gpu"]
        assert run["model_slug"]
        assert run["tp"] >= 1
        assert run["kv_tokens"] > 0
        assert run["split"] in ("calibration", "validation")
    splits = {r["split"] for r in RUNS}
    assert splits == {"calibration", "validation"}
