"""The memory model against real vLLM start-up logs (fixtures/vllm_startup_logs.json).

Targets (issue 13): weights MAE ≤ 1 %, KV tokens MAE ≤ 3 %, max concurrency MAE ≤ 3 %, on the
validation split (cases not used to fit a constant) as on the whole set.
"""

import math

import pytest

from planner.engine.assumptions import GIB
from planner.engine.memory import kv_layout
from tests.planner.engine.startup_logs import architecture, case_errors, cases, predict

CASES = cases()
WEIGHT_CASES = [c for c in CASES if "weights_gib" in c["reported"]]
KV_CASES = [c for c in CASES if c["kv_check"] and "kv_tokens" in c["reported"]]


def _mae(values):
    got = [abs(v) for v in values if v is not None]
    return sum(got) / len(got)


# Known misses, kept in the MAE: strict, so a fix shows up as an unexpected pass.
KNOWN_WEIGHT_MISSES = {
    "gpt-oss-20b-mxfp4-h100-tp4pp1-len8192": (
        "0.15 GiB per GPU more than the Triton MXFP4 layout (planner/engine/mxfp4.py) gives at "
        "TP 4 on 0.19.0 (-4.2 %); the same layout is -1.1 % at TP 2 and -0.3 % for the 120B at "
        "TP 1 on 0.14.1, and no rule found explains the TP 4 excess"
    ),
    "qwen2.5-vl-7b-tp4-v0.8.0": (
        "0.1 GiB per GPU more than the sharded count at TP 4 on vLLM 0.8.0 (-2.6 %); the 72B at "
        "TP 4 on 0.8.3 is within 0.7 %"
    ),
    "opt-125m-turing-8g-v0.6.4": "V0 counts ~6 MiB more than the 0.23 GiB of a 125M model (-2.2 %)",
}
KNOWN_KV_MISSES: dict[str, str] = {}


def _params(cases, misses):
    return [
        pytest.param(
            case,
            id=case["id"],
            marks=[pytest.mark.xfail(strict=True, reason=misses[case["id"]])]
            if case["id"] in misses
            else [],
        )
        for case in cases
    ]


@pytest.mark.parametrize("case", _params(WEIGHT_CASES, KNOWN_WEIGHT_MISSES))
def test_weights_within_2_percent(case):
    assert abs(case_errors(case).weights) <= 0.02


@pytest.mark.parametrize("case", _params(KV_CASES, KNOWN_KV_MISSES))
def test_kv_tokens_within_6_percent_or_half_a_gib(case):
    # A nearly full GPU (72B at TP2: 3 GiB of KV in 75 GiB) magnifies a 0.15 GiB error to 5 %:
    # the tolerance is 6 % of the tokens or 0.5 GiB of KV memory, whichever is larger.
    mem = predict(case)
    reported = case["reported"]["kv_tokens"]
    miss_gib = abs(mem.kv_tokens - reported) * mem.worst.kv_bytes_per_token / GIB
    assert abs(mem.kv_tokens / reported - 1) <= 0.06 or miss_gib <= 0.5


@pytest.mark.parametrize("split", ["all", "validation"])
def test_mean_absolute_errors_meet_the_targets(split):
    rows = [case_errors(c) for c in CASES if split == "all" or c["split"] == split]
    assert _mae(r.weights for r in rows) <= 0.01
    assert _mae(r.kv_tokens for r in rows) <= 0.03
    assert _mae(r.max_concurrency for r in rows) <= 0.03


def test_every_case_names_its_source_version_and_split():
    assert len(CASES) >= 60
    assert all(c["source_url"].startswith("https://github.com/") for c in CASES)
    assert all(c["vllm_version"] and c["split"] in {"calibration", "validation"} for c in CASES)
    assert sum(c["split"] == "validation" for c in CASES) >= len(CASES) / 2


QUIRKS = {
    "nested text_config": "text_config",
    "sliding window": "sliding window",
    "chunked local attention": "chunked attention",
    "tied embeddings": "tied",
    "2-matrix MLP": "2-matrix MLP",
    "MoE": "MoE",
    "shared expert": "shared expert",
    "MLA": "MLA",
    "vision tower": "vision",
    "mxfp4": "mxfp4",
}


# Logs that stop before the KV cache (an OOM in the profile run) still check the weights.
WEIGHT_QUIRKS = {
    "Qwen2.5-VL vision tower": "qwen2_5_vl",
    "mllama cross-attention": "cross-attention",
    "AWQ checkpoint": "AWQ",
    "bitsandbytes checkpoint": "bitsandbytes",
}
QUIRK_CASES = [(q, tag, KV_CASES) for q, tag in QUIRKS.items()] + [
    (q, tag, WEIGHT_CASES) for q, tag in WEIGHT_QUIRKS.items()
]


@pytest.mark.parametrize(("quirk", "tag", "cases"), QUIRK_CASES, ids=[q for q, _, _ in QUIRK_CASES])
def test_each_family_quirk_has_a_real_log(quirk, tag, cases):
    assert any(tag in c["family"] for c in cases), quirk


@pytest.mark.parametrize(
    "version", ["0.5.3", "0.6.4", "0.8.0", "0.10.1", "0.15.0", "0.17.0", "0.19.0", "0.27.1"]
)
def test_each_profiling_era_has_a_real_log(version):
    assert any(c["vllm_version"] == version for c in CASES)


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "fp32", "fp8", "int8", "int4", "mxfp4"])
def test_each_weight_dtype_has_a_real_log(dtype):
    assert any(c["weight_dtype"] == dtype for c in WEIGHT_CASES)


def test_gemma3_groups_layers_the_way_vllm_logs_them():
    # 62 layers: 10 full + 52 sliding → groups of 10, sliding padded to 60 ("Add 8 padding
    # layers"), 7 groups; tokens = blocks // 7 × 16 (15997 blocks → 36560 tokens in the log).
    case = next(c for c in CASES if c["id"].startswith("gemma-3-27b"))
    layout = kv_layout(architecture(case), 1, 0, 62, "auto")
    assert (layout.group_size, layout.num_groups) == (10, 7)
    assert layout.windows.count(0) == 1
    mem = predict(case)
    assert mem.worst.blocks == pytest.approx(case["reported"]["gpu_blocks"], rel=0.01)


def test_llama4_chunked_layers_hold_no_window_padding_block():
    case = next(c for c in CASES if c["id"].startswith("llama-4-scout"))
    mem = predict(case)
    assert mem.worst.blocks_per_request == 4 * math.ceil(8192 / 16)
    assert mem.max_concurrency == pytest.approx(case["reported"]["max_concurrency"], rel=0.01)


def test_tp2_non_torch_memory_is_about_2_gib_with_the_custom_all_reduce():
    case = next(c for c in CASES if c["id"] == "llama-3.1-8b-bf16-h100-tp2pp1-len8192")
    mem = predict(case)
    assert mem.worst.non_torch_bytes / GIB == pytest.approx(
        case["reported"]["non_torch_gib"], abs=0.1
    )


def test_405b_fp8_keeps_attention_16_bit():
    case = next(c for c in CASES if c["id"] == "llama31-405b-fp8-h100-tp8")
    assert abs(case_errors(case).weights) <= 0.02


@pytest.mark.parametrize("version", ["0.15.0", "0.16.0", "0.17.0", "0.18.0"])
def test_activation_peak_follows_the_version_sweep(version):
    # One Qwen3-14B command on four releases: the full-sort sampler (5.64 GiB) up to 0.16,
    # 2.23 GiB from 0.17; non-torch 0.13 GiB up to 0.17, 0.25 GiB from 0.18.
    case = next(c for c in CASES if c["id"].endswith(f"-v{version}"))
    stage = predict(case).worst
    assert stage.activation_bytes / GIB == pytest.approx(
        case["reported"]["activation_gib"], abs=0.05
    )
    assert stage.non_torch_bytes / GIB == pytest.approx(case["reported"]["non_torch_gib"], abs=0.01)


def test_tp2_non_torch_before_0_18_leaves_out_the_custom_all_reduce_buffers():
    # vLLM 0.16, 70B AWQ on two L40S: 2.1 GiB of non-torch memory (the 0.19 figure) would put
    # the KV cache 10 % low; the 0.55 GiB of llm-d-planner's January 2026 TP 2 runs fits it.
    case = next(c for c in CASES if c["id"] == "llama3-70b-awq-l40s-tp2")
    assert predict(case).worst.non_torch_bytes / GIB == pytest.approx(0.55, abs=0.01)
    assert abs(case_errors(case).kv_tokens) <= 0.04


def test_mistral_format_checkpoints_replicate_the_vision_tower():
    by_id = {c["id"]: c for c in CASES}
    for tp in (2, 4):
        case = by_id[f"mistral-small-3.1-24b-bf16-h100-tp{tp}pp1-len8192"]
        assert abs(case_errors(case).weights) <= 0.005
    quantized = by_id["mistral-small-3.1-24b-w8a8-int8-h100-tp2pp1-len8192"]
    assert not architecture(quantized).vision_replicated
