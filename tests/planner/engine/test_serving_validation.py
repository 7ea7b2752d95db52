"""The serving model's error on published runs no rule was fitted on, by load level and GPU.

The table is computed here from the fixtures (serving_runs.json: A100 runs; serving_load_runs.json:
runs under load on other GPUs) and the thresholds are the errors the model reaches, so a change
that makes any group worse fails. docs/benchmarks.md shows the same table
(`.venv/bin/python bench/eval_serving.py --table`).
"""

from pathlib import Path

import pytest

from planner.engine.serving.bands import band_for
from planner.engine.serving.replay import replay, run_regime
from planner.engine.serving.validation import (
    GroupError,
    RunError,
    in_flight,
    load_level,
    load_runs,
    run_error,
    source_of,
    validation_table,
)

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = load_runs([FIXTURES / "serving_runs.json", FIXTURES / "serving_load_runs.json"])
LOAD_RUNS = load_runs([FIXTURES / "serving_load_runs.json"])
GRID_RUNS = load_runs([FIXTURES / "lambda_v0_grid.json"])

# Held-out mean absolute % error the model reaches (the issue's targets: 15 / 25 / 15).
# Held out and reported rather than fitted (docs/benchmarks.md): gpt-oss-120b on 8 × B200
# (vllm-project/vllm#23696) is TPOT −78 %, tok/s +78 %, and gpt-oss-20b on one B200 at 1,024 in
# flight (vllm-project/vllm#27869) tok/s −35 %, two host CPUs the host terms do not tell apart;
# gpt-oss-120b on H100 (SemiAnalysisAI/InferenceX#828) is TPOT −14 to −19 % at TP 8, −4 % at
# TP 4 and +4 % at TP 2 with MXFP4's fused-MoE floor (bench/fit_moe_floors.py), the rest the
# small GEMMs' floors at thin slices, which the roofline lacks (bench/gemm_fixed_time.py);
# DeepSeek-R1 on 8 × H200 at 10 req/s
# (simon-mo/vLLM-Benchmark) is TPOT −35 and −48 % on two clouds, and its fixed-length runs'
# TTFT −12 to −62 % (vLLM 0.8.4 prefilled DeepSeek-R1 slower than the model or the measured
# kernels of 0.19+ say). gpt-oss-120b behind Ray Serve on H100
# (anyscale/ray-serve-llm-perf-examples, vLLM 0.11, 64 in flight) is TTFT −60 % with 8,000-token
# prompts at TP 4 and TPOT +36 % at TP 8 with 5,000-token prompts every few steps: reported, not
# fitted. Llama-3.1-70B-FP8 on one H100 and one A100 (LambdaLabsML/vllm-benchmark, vLLM 0.5.4,
# 7 prompts at once) is TPOT -1 and +12 %, but TTFT -51 and -54 %: the result's first prompts
# waited 0.29 s (H100) and 0.35 / 1.22 s (A100) for ~300 tokens of prefill, which no GPU term
# explains; reported, not fitted. Llama-3.1-8B/70B on L40S (crusoecloud/crusoe-cookbook, vLLM
# 0.5.5, Poisson 1-9 req/s) is held out whole: the 70B at TP 4/8 over PCIe was TPOT -35 to -63 %
# until rings over 3+ PCIe GPUs took the published nccl-tests' bus bandwidth
# (bench/pcie_rings.py); now -5 to -27 % (FP8 at TP 4, 3 req/s, the worst), which moves the 65-256
# level from 11.6 to 12.7 %. The 8B's bf16 TTFT stays +25 to +54 %.
HELD_OUT = {"tpot_pct": 12.5, "ttft_pct": 22.5, "tok_s_pct": 10.5}
BY_LOAD_LEVEL_TPOT = {"<= 8": 12.0, "9-64": 11.5, "65-256": 13.5, "> 256": 16.5}
# The held-out runs whose publisher gave no calibration run: what a new source sees.
NEVER_CALIBRATED = {"tpot_pct": 17.5, "ttft_pct": 25.5, "tok_s_pct": 12.5}
# The V0 engine's runs (vLLM < 0.8) on their own: before its host terms the model put TPOT
# 58 % low and output tok/s 109 % high on these held-out runs (bench/fit_v0_host.py); refitted
# on single requests (Qwen's speed benchmark), tok/s over both eras: 17 % (8 runs) -> 12 % (20);
# with Crusoe's twenty 0.5.5 runs, 7.8 % (40).
HELD_OUT_V0 = {"tpot_pct": 12.0, "tok_s_pct": 9.0}
# Lambda's vLLM 0.5.4 grid (70B FP8 on 2-8 H100s, bursts of 7-542), held out and reported apart
# so that one model and release does not outweigh every other source: TPOT +9 to +25 % with a
# few in flight, -9 to -35 % with 28-241; TTFT -30 to -58 % from 15 to 241 in flight, where
# 0.5.4 took about twice the model's time to prefill a burst; tok/s within 6 % on average.
LAMBDA_GRID = {"tpot_pct": 18.0, "ttft_pct": 34.5, "tok_s_pct": 6.5}


@pytest.fixture(scope="module")
def errors() -> dict[str, RunError]:
    return {r["id"]: run_error(r) for r in RUNS}


@pytest.fixture(scope="module")
def held_out(errors) -> dict[str, GroupError]:
    rows = validation_table(list(errors.values()))
    return {row.group: row for row in rows}


def test_held_out_error_stays_at_what_the_model_reaches(held_out):
    overall = held_out["all validation"]
    assert overall.runs >= 91
    for metric, limit in HELD_OUT.items():
        assert getattr(overall, metric) <= limit, metric


def test_every_load_level_is_reported_and_holds(held_out):
    for level, limit in BY_LOAD_LEVEL_TPOT.items():
        row = held_out[f"in flight {level}"]
        assert row.tpot_pct is not None, level
        assert row.tpot_pct <= limit, level


def test_v0_engine_runs_hold_on_their_own(held_out):
    rows = [held_out["engine v0-in-process"], held_out["engine v0"]]
    assert sum(r.runs for r in rows) >= 8
    tpot = rows[0]  # only the in-process era published TPOT
    assert tpot.tpot_pct <= HELD_OUT_V0["tpot_pct"]
    weighted = sum(r.tok_s_pct * r.tok_s_runs for r in rows) / sum(r.tok_s_runs for r in rows)
    assert weighted <= HELD_OUT_V0["tok_s_pct"]


def test_runs_from_sources_never_calibrated_on_are_reported_apart_and_hold(held_out):
    seen, unseen = held_out["source also calibrated on"], held_out["source never calibrated on"]
    assert seen.runs + unseen.runs == held_out["all validation"].runs
    assert unseen.runs >= 44
    for metric, limit in NEVER_CALIBRATED.items():
        assert getattr(unseen, metric) <= limit, metric


def test_the_shown_bands_cover_most_runs_of_sources_never_calibrated_on(errors):
    # A prediction outside a calibrated regime carries the wide band (serving/bands.py); on the
    # held-out runs whose publisher gave no calibration run it holds 75 % of TPOT, 92 % of TTFT
    # and 77 % of tok/s errors (p80 bands): a narrower band would promise more than the model has.
    calibrated = {e.source for e in errors.values() if e.split == "calibration"}
    covered: dict[str, list[bool]] = {"tpot": [], "ttft": [], "tok_s": []}
    for run in RUNS:
        err = errors[run["id"]]
        if err.split != "validation" or err.source in calibrated:
            continue
        band = band_for(run_regime(run))
        for metric, hits in covered.items():
            value = getattr(err, metric)
            if value is not None:
                hits.append(abs(value) <= getattr(band, metric))
    share = {metric: sum(hits) / len(hits) for metric, hits in covered.items()}
    assert share["tpot"] >= 0.7, share
    assert share["tok_s"] >= 0.7, share
    assert share["ttft"] >= 0.8, share


def test_a_source_is_its_repository_or_its_site():
    assert source_of("https://github.com/LambdaLabsML/vllm-benchmark/blob/main/x.md#a") == (
        "github.com/lambdalabsml/vllm-benchmark"
    )
    assert source_of("https://github.com/LambdaLabsML/vllm-benchmark") == (
        "github.com/lambdalabsml/vllm-benchmark"
    )
    assert source_of("https://jingchaozhang.github.io/LLM-Inference") == "jingchaozhang.github.io"


def test_every_gpu_generation_of_the_held_out_runs_is_reported(held_out):
    assert {"ampere", "ada", "hopper", "blackwell"} <= set(held_out)


def test_load_levels_follow_the_issue():
    assert [load_level(x) for x in (1, 8, 9, 64, 65, 256, 257, 1000)] == [
        "<= 8",
        "<= 8",
        "9-64",
        "9-64",
        "65-256",
        "65-256",
        "> 256",
        "> 256",
    ]


def test_a_small_model_under_a_burst_is_paced_by_the_api_server():
    # Qwen3-0.6B, 500 prompts at once on an H100: the server admits them at ~95 req/s, so the
    # engine runs tens of sequences and a token every ~5 ms. Without the server the model put
    # all 500 in one batch: TPOT 31.6 ms (×5.8), TTFT 0.42 s.
    (run,) = [r for r in LOAD_RUNS if r["id"].startswith("kvcached331-qwen3-0.6b-h100-burst")]
    pred = replay(run)
    measured = run["measured"]
    assert pred.tpot_mean_ms == pytest.approx(measured["tpot_mean_ms"], rel=0.2)
    assert pred.ttft_mean_ms == pytest.approx(measured["ttft_mean_ms"], rel=0.2)
    assert pred.requests_per_s == pytest.approx(measured["requests_per_s"], rel=0.05)


def test_every_load_run_states_its_setup_and_source():
    assert LOAD_RUNS
    for run in LOAD_RUNS:
        assert run["source_url"].startswith("https://")
        assert run["vllm_version"]
        assert run["gpu"]
        assert run["model_slug"]
        assert run["split"] in ("calibration", "validation")
        assert run["split"] == "validation" or run["fitted"]
        assert in_flight(run) > 0


def test_the_lambda_v0_grid_is_reported_apart_and_holds():
    errors = [run_error(r) for r in GRID_RUNS]
    assert len(errors) == 21
    assert {e.source for e in errors} == {
        source_of("https://github.com/LambdaLabsML/vllm-benchmark")
    }
    (overall,) = [row for row in validation_table(errors) if row.group == "all validation"]
    for metric, limit in LAMBDA_GRID.items():
        assert getattr(overall, metric) <= limit, metric
