"""A layout with no KV cache left says which setting would start it, and the setting does.

vLLM's start-up profile samples max_num_seqs sequences over the whole vocabulary; with
gpt-oss-120b's 201,088 tokens on one 80 GB H100 under vLLM 0.12 that peak takes the room the KV
cache needed (vLLM's gpt-oss guide: out of memory at the default settings on one H100).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.utils import translation

from planner.engine import plan, spec_from_dict
from planner.engine.memory.room import UTILIZATIONS
from planner.engine.messages import Code
from planner.presentation.messages import english_text, text
from planner.presentation.verdict import nothing_fits_sentence

FIXTURES = Path(__file__).parent / "engine" / "fixtures"
HF_CONFIGS = json.loads((FIXTURES / "hf_configs.json").read_text())


def _spec(model: Any, gpu: str, tp: int, **extra: Any) -> dict[str, Any]:
    return {
        "model": model,
        "max_model_len": 32768,
        "workload": {"concurrency": 8, "avg_input_tokens": 1024, "avg_output_tokens": 512},
        "hardware": {
            "pool_kind": "dedicated",
            "nodes": [{"hostname": "gpu-1", "gpu": gpu, "gpu_count": tp}],
        },
        "pinned_layout": {"tp": tp, "pp": 1, "replicas": 1},
        **extra,
    }


def _pinned(spec: dict[str, Any]):
    return plan(spec_from_dict(spec)).pinned


GPT_OSS_120B = {"name": "openai/gpt-oss-120b", "hf_config": HF_CONFIGS["configs"]["gpt-oss-120b"]}


def test_fewer_sequences_start_gpt_oss_120b_on_one_h100_and_the_hint_says_so():
    spec = _spec(GPT_OSS_120B, "h100-sxm", 1, vllm_version="0.12.0")
    pinned = _pinned(spec)
    assert not pinned.fits
    reason = pinned.rejected_reason
    assert reason.code == Code.REJECT_MEMORY_SEQS
    # The sampler's profile is most of the overhead: 1,024 sequences of fp32 logits.
    assert reason.params["overhead_gib"] > 7
    assert (
        reason.params["weights_gib"] + reason.params["overhead_gib"]
        > (reason.params["requested_gib"])
    )
    seqs = reason.params["max_num_seqs"]
    assert f"--max-num-seqs {seqs} would start it" in english_text(reason)
    # The hint is checked, not guessed: with it the same layout starts.
    assert _pinned({**spec, "max_num_seqs": seqs}).fits
    assert not _pinned({**spec, "max_num_seqs": seqs * 2}).fits


def test_a_larger_share_of_the_gpu_is_offered_when_fewer_sequences_are_not_enough():
    spec = _spec("qwen2.5-72b", "h100-sxm", 2, weight_dtype="bf16", max_model_len=8192)
    reason = _pinned(spec).rejected_reason
    assert reason.code == Code.REJECT_MEMORY_UTILIZATION
    share = reason.params["utilization"]
    assert share in UTILIZATIONS
    assert f"gpu_memory_utilization {share} would start it" in english_text(reason)
    assert _pinned({**spec, "gpu_memory_utilization": share}).fits


def test_a_kv_cache_short_of_one_request_says_what_would_hold_one():
    # Llama-3.1-70B in bf16 on two H100s: ~560 KV tokens left at the defaults, < 8,192.
    spec = _spec("llama-3.1-70b", "h100-sxm", 2, weight_dtype="bf16", max_model_len=8192)
    reason = _pinned(spec).rejected_reason
    assert reason.code in (Code.REJECT_KV_SEQS, Code.REJECT_KV_UTILIZATION)
    assert reason.params["kv_tokens"] < reason.params["max_model_len"] == 8192
    change = (
        {"max_num_seqs": reason.params["max_num_seqs"]}
        if reason.code == Code.REJECT_KV_SEQS
        else {"gpu_memory_utilization": reason.params["utilization"]}
    )
    assert "would hold one request" in english_text(reason)
    assert _pinned({**spec, **change}).fits


@pytest.mark.parametrize(
    ("model", "gpu", "tp"),
    [("llama-3.1-405b", "h100-sxm", 1), ("mixtral-8x7b", "h100-sxm", 1)],
)
def test_weights_larger_than_the_gpu_get_no_hint_only_the_figures(model, gpu, tp):
    reason = _pinned(_spec(model, gpu, tp, weight_dtype="bf16", max_model_len=8192)).rejected_reason
    assert reason.code == Code.REJECT_MEMORY_OVER
    assert reason.params["weights_gib"] > reason.params["requested_gib"]
    assert "GiB requested" in english_text(reason)


def test_the_hint_reads_in_chinese_with_the_flag_kept():
    reason = _pinned(_spec(GPT_OSS_120B, "h100-sxm", 1, vllm_version="0.12.0")).rejected_reason
    with translation.override("zh-hans"):
        shown = text(reason)
    assert "KV 缓存" in shown
    assert f"--max-num-seqs {reason.params['max_num_seqs']}" in shown


def test_a_plan_where_only_a_setting_stands_in_the_way_leads_with_that_setting():
    result = plan(spec_from_dict(_spec(GPT_OSS_120B, "h100-sxm", 1, vllm_version="0.12.0")))
    rec = result.recommendation
    assert not rec.fits
    assert rec.summary.code == Code.SUMMARY_NOTHING_FITS_AS_SET
    codes = [r.code for r in rec.reasons]
    assert Code.NOTHING_FITS_AS_SET in codes
    assert Code.NOTHING_FITS not in codes
    seqs = result.pinned.rejected_reason.params["max_num_seqs"]
    with translation.override("en"):
        sentence = nothing_fits_sentence(result)
    assert f"--max-num-seqs {seqs} would start it" in sentence
    assert "shorten" not in sentence


def test_a_plan_where_no_setting_helps_still_says_add_gpus():
    spec = _spec("llama-3.1-405b", "h100-sxm", 1, weight_dtype="bf16", max_model_len=8192)
    result = plan(spec_from_dict(spec))
    assert result.recommendation.summary.code == Code.SUMMARY_NOTHING_FITS
    with translation.override("en"):
        assert "add GPUs" in nothing_fits_sentence(result)
