"""vLLM's V0 engine (before 0.8): heavier host work, and prompts run whole before any decode."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.engine import plan
from planner.engine.assumptions import DEFAULT_ASSUMPTIONS
from planner.engine.calibration import CalibrationFactors, calibrated
from planner.engine.messages import Code
from planner.engine.profiling import V0_CHUNK_TOKENS
from planner.engine.serving.host import (
    EngineEra,
    default_v0_batched_tokens,
    engine_era,
    host_overheads,
    prefill_first,
)
from planner.engine.serving.predict import predict
from planner.engine.serving.replay import replay_context, workload_of
from planner.engine.serving.simulate import simulate
from planner.engine.spec import spec_from_dict
from tests.planner.engine.conftest import hardware

_RUN = {
    "id": "era-probe",
    "model_slug": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "tp": 1,
    "pp": 1,
    "weight_dtype": "bf16",
    "gpu_memory_utilization": 0.9,
    "max_model_len": 2048,
    "max_num_batched_tokens": 2048,
    "max_num_seqs": 256,
    "load": {"arrival": "burst", "burst_size": 400, "input_tokens": 200, "output_tokens": 200},
}


def _ctx(version: str, **run):
    return replay_context({**_RUN, "vllm_version": version, **run})


@pytest.mark.parametrize(
    ("version", "era"),
    [
        ("0.4.3", EngineEra.V0_IN_PROCESS),
        ("0.5.4", EngineEra.V0_IN_PROCESS),
        ("0.6.0", EngineEra.V0),
        ("v0.7.3", EngineEra.V0),
        ("0.8.0", EngineEra.V1),
        ("0.19.0", EngineEra.V1),
        ("not-a-version", EngineEra.V1),
    ],
)
def test_each_version_falls_in_its_era(version, era):
    assert engine_era(version) == era


@pytest.mark.parametrize(
    ("version", "era"),
    [
        ("0.7.3", EngineEra.V0),
        ("0.8.2", EngineEra.V0),  # "Compute Capability < 8.0 is not supported by the V1 Engine"
        ("0.10.1", EngineEra.V0),
        ("0.10.2", EngineEra.V1),  # V1 on FlexAttention (vLLM PR 23614)
        ("0.19.0", EngineEra.V1),
    ],
)
def test_gpus_below_ampere_kept_v0_up_to_0_10_1(version, era):
    assert engine_era(version, pre_ampere=True) == era


def test_v0_runs_prompts_first_only_where_chunked_prefill_was_off():
    assert prefill_first(EngineEra.V0, 32_768)
    assert not prefill_first(EngineEra.V0, 65_536)  # V0 chunked long contexts by default
    assert not prefill_first(EngineEra.V1, 2048)
    assert default_v0_batched_tokens(EngineEra.V0_IN_PROCESS, 1024) == 2048
    assert default_v0_batched_tokens(EngineEra.V0_IN_PROCESS, 8192) == 8192
    assert default_v0_batched_tokens(EngineEra.V0_IN_PROCESS, 131_072) == V0_CHUNK_TOKENS
    assert default_v0_batched_tokens(EngineEra.V1, 8192) is None


def test_v0_host_work_is_heavier_and_v1_keeps_its_constants():
    v1, v0, old = _ctx("0.10.1"), _ctx("0.6.3"), _ctx("0.5.4")
    assert v1.per_seq_overhead_ms < v0.per_seq_overhead_ms < old.per_seq_overhead_ms
    assert not v1.prefill_first
    assert v0.prefill_first
    assert old.prefill_first


def test_prompts_first_stalls_the_decodes_of_a_burst():
    """The same replica and burst: V0's prompt-only steps hold every running decode back."""
    v1 = _ctx("0.10.1")
    v0_scheduler = dataclasses.replace(v1, prefill_first=True)
    wl = workload_of({**_RUN, "load": {**_RUN["load"], "input_tokens": 1500, "output_tokens": 100}})
    chunked, whole = predict(v1, wl, scan=False), predict(v0_scheduler, wl, scan=False)
    assert whole.tpot_mean_ms > chunked.tpot_mean_ms * 1.1


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 60),
    n_in=st.integers(1, 3000),
    n_out=st.integers(1, 300),
    seqs=st.integers(1, 64),
)
def test_prompts_first_finishes_every_request_with_its_tokens(n, n_in, n_out, seqs):
    ctx = dataclasses.replace(_ctx("0.5.4"), max_num_seqs=seqs, max_num_batched_tokens=2048)
    result = simulate(ctx, [(0.0, n_in, n_out, 0)] * n)
    assert len(result.finished) == n
    assert all(f.output_tokens == n_out for f in result.finished)
    assert all(f.ttft_ms > 0 and f.e2e_ms >= f.ttft_ms for f in result.finished)


def test_a_plan_for_a_v0_version_is_slower_and_says_its_scheduler_defaults():
    def spec(version):
        return spec_from_dict(
            {
                "model": "llama-3.1-8b",
                "vllm_version": version,
                "max_model_len": 4096,
                "workload": {"concurrency": 128, "avg_input_tokens": 512, "avg_output_tokens": 256},
                "hardware": hardware(1, 1, "h100-sxm"),
                "pinned_layout": {"tp": 1, "pp": 1, "replicas": 1},
            }
        )

    old, new = plan(spec("0.5.4")), plan(spec("0.10.1"))
    assert old.pinned.serving.tpot_mean_ms > 1.5 * new.pinned.serving.tpot_mean_ms
    assert old.pinned.serving_context.max_num_seqs == 256
    assert old.pinned.serving_context.max_num_batched_tokens == 4096


def test_a_plan_for_a_v0_version_says_why_its_speeds_are_lower():
    def codes(version, max_model_len=4096):
        spec = spec_from_dict(
            {
                "model": "llama-3.1-8b",
                "vllm_version": version,
                "max_model_len": max_model_len,
                "workload": {"concurrency": 64, "avg_input_tokens": 512, "avg_output_tokens": 256},
                "hardware": hardware(1, 1, "h100-sxm"),
            }
        )
        return {r.code for r in plan(spec).recommendation.reasons}

    assert {Code.V0_ENGINE_HOST, Code.V0_PROMPTS_FIRST} <= codes("0.6.3")
    long_context = codes("0.6.3", 65_536)
    assert Code.V0_ENGINE_HOST in long_context
    assert Code.V0_PROMPTS_FIRST not in long_context  # V0 chunked prompts above 32K
    assert not {Code.V0_ENGINE_HOST, Code.V0_PROMPTS_FIRST} & codes("0.10.1")


def test_a_calibrated_per_sequence_overhead_holds_for_every_engine_era():
    measured = calibrated(DEFAULT_ASSUMPTIONS, CalibrationFactors(per_request_overhead_ms=0.07))
    for era in EngineEra:
        for gpus in (1, 4):
            assert host_overheads(era, measured, gpus=gpus)[1] == 0.07


def test_a_v0_replica_on_several_gpus_pays_the_broadcast_per_step_and_per_sequence():
    a = DEFAULT_ASSUMPTIONS
    for era in (EngineEra.V0, EngineEra.V0_IN_PROCESS):
        one_step, one_seq = host_overheads(era, a, gpus=1)
        four_step, four_seq = host_overheads(era, a, gpus=4)
        assert four_step == pytest.approx(one_step + a.v0_multi_gpu_step_overhead_ms)
        assert four_seq == pytest.approx(one_seq + a.v0_multi_gpu_per_seq_overhead_ms)
    assert a.v0_multi_gpu_per_seq_overhead_ms > 0
    assert host_overheads(EngineEra.V1, a, gpus=4) == host_overheads(EngineEra.V1, a, gpus=1)


def test_a_t4_plan_on_0_9_follows_v0_and_says_why():
    def plan_on(version):
        return plan(
            spec_from_dict(
                {
                    "model": "llama-3.1-8b",
                    "weight_dtype": "fp16",
                    "vllm_version": version,
                    "max_model_len": 2048,
                    "workload": {
                        "concurrency": 16,
                        "avg_input_tokens": 512,
                        "avg_output_tokens": 128,
                    },
                    "hardware": hardware(1, 2, "t4"),
                    "pinned_layout": {"tp": 2, "pp": 1, "replicas": 1},
                }
            )
        )

    old, new = plan_on("0.9.2"), plan_on("0.10.2")
    assert old.pinned.serving_context.era == EngineEra.V0
    assert new.pinned.serving_context.era == EngineEra.V1
    assert old.memory_rules.engine == "V0"
    assert new.memory_rules.engine == "V1"
    codes = {r.code for r in old.recommendation.reasons}
    assert {Code.V0_ON_PRE_AMPERE, Code.V0_ENGINE_HOST} <= codes
    assert Code.V0_ON_PRE_AMPERE not in {r.code for r in new.recommendation.reasons}
    assert old.pinned.serving.tpot_mean_ms > new.pinned.serving.tpot_mean_ms


@pytest.mark.parametrize(("gpu", "says_fp16"), [("t4", True), ("a100-80g-sxm", False)])
def test_a_bf16_checkpoint_below_ampere_is_said_to_run_fp16(gpu, says_fp16):
    result = plan(
        spec_from_dict(
            {
                "model": "qwen2.5-7b",
                "vllm_version": "0.10.2",
                "max_model_len": 2048,
                "workload": {"concurrency": 4, "avg_input_tokens": 256, "avg_output_tokens": 64},
                "hardware": hardware(1, 1, gpu),
            }
        )
    )
    codes = {r.code for r in result.recommendation.reasons}
    assert (Code.FP16_ON_PRE_AMPERE in codes) is says_fp16
