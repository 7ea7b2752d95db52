"""The routed experts' compute: the fused-MoE kernels' own rate, lower on thin expert slices.

The shares and the knee were fitted on aiconfigurator-core's measured vLLM MoE tables
(bench/fit_moe_compute.py), each format's fixed time per layer on its decode passes
(bench/fit_moe_floors.py); the last tests hold the model to a few of those measurements when the
optional extra is installed (make test installs it).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from catalog.data import load_models
from planner.engine.serving.kernels import (
    gpu_generation,
    moe_compute_share,
    moe_fixed_scale,
    moe_read_share,
)
from planner.engine.serving.step import experts_ms, stage_ms
from planner.engine.spec import catalog_gpu
from tests.planner.engine.test_serving_properties import A, _ctx


def _expert_layer_ms(ctx, slug: str, tokens: int, gpu: str, dtype: str) -> float:
    """Return the model's routed-expert time of one MoE layer on one GPU."""
    arch = load_models()[slug].architecture
    generation = gpu_generation(gpu, catalog_gpu(gpu).fp8_support)
    fixed_us = A.moe_layer_fixed_us * moe_fixed_scale(dtype, generation)
    return experts_ms(ctx, tokens) / arch.num_moe_layers + fixed_us / 1e3


def test_a_dense_model_has_no_expert_term():
    ctx = _ctx("llama-3.1-8b")
    assert ctx.expert_flops_per_token == 0.0
    assert ctx.expert_flops_per_ms == math.inf


def test_thin_expert_slices_compute_slower():
    wide, thin = _ctx("qwen3-30b-a3b", tp=1), _ctx("qwen3-30b-a3b", tp=4)
    assert wide.expert_flops_per_ms > thin.expert_flops_per_ms
    width = load_models()["qwen3-30b-a3b"].architecture.moe_intermediate_size / 4
    peak_flops_per_ms = catalog_gpu("h100-sxm").bf16_dense_tflops * 1e9
    share = moe_compute_share("bf16", "hopper")
    assert thin.expert_flops_per_ms == pytest.approx(
        peak_flops_per_ms * share * width / (width + A.moe_shard_knee)
    )


def test_prefill_of_a_moe_pays_the_kernels_rate_not_the_dense_one():
    ctx = _ctx("qwen3-30b-a3b", tp=1)
    as_dense = dataclasses.replace(ctx, expert_flops_per_token=0.0)
    kwargs = {"decode_seqs": 0, "prefill_tokens": 8192, "kv_read_tokens": 0, "attn_pairs": 0}
    slower, _ = stage_ms(ctx, **kwargs)
    faster, _ = stage_ms(as_dense, **kwargs)
    assert slower > faster


def test_fp16_takes_the_bf16_share_and_unknown_formats_have_none():
    assert moe_compute_share("fp16", "hopper") == moe_compute_share("bf16", "hopper")
    assert moe_compute_share("bf16", "ampere") is None


def test_the_fixed_time_per_moe_layer_follows_the_kernel_behind_the_format():
    # Hopper's block-FP8 and MXFP4 fused MoE pay more a layer than bf16; Blackwell's kernels less.
    assert moe_fixed_scale("mxfp4", "hopper") > moe_fixed_scale("bf16", "hopper")
    assert moe_fixed_scale("fp8", "hopper") > moe_fixed_scale("bf16", "hopper")
    assert moe_fixed_scale("mxfp4", "blackwell") < 1.0 < moe_fixed_scale("mxfp4", "hopper")
    assert moe_fixed_scale("fp16", "ampere") == moe_fixed_scale("bf16", "ampere")
    assert moe_fixed_scale("int4", "hopper") == moe_fixed_scale("fp8", "ampere") == 1.0


@pytest.mark.parametrize(("gpu", "generation"), [("h100-sxm", "hopper"), ("b200", "blackwell")])
def test_a_moe_step_pays_its_formats_fixed_time_in_every_moe_layer(gpu, generation):
    arch = load_models()["gpt-oss-120b"].architecture
    ctx = _ctx("gpt-oss-120b", tp=8, gpu=gpu, dtype="mxfp4")
    launches_ms = arch.num_layers * A.launch_per_layer_decode_us / 1e3
    fixed_ms = arch.num_moe_layers * A.moe_layer_fixed_us * moe_fixed_scale("mxfp4", generation)
    assert ctx.launch_decode_ms == pytest.approx(launches_ms + fixed_ms / 1e3)


# (model, GPU, TP, dtype, the tables' format, hidden, intermediate, experts, top-k)
MEASURED = [
    ("deepseek-r1", "h200-sxm", 8, "fp8", "fp8_block", 7168, 2048, 256, 8),
    ("qwen3-235b-a22b", "h200-sxm", 4, "bf16", "bfloat16", 4096, 1536, 128, 8),
    ("mixtral-8x7b", "h200-sxm", 2, "bf16", "bfloat16", 4096, 14336, 8, 2),
    ("qwen3-30b-a3b", "h200-sxm", 1, "fp8", "fp8_block", 2048, 768, 128, 8),
    ("qwen3-30b-a3b", "h200-sxm", 1, "int4", "int4_wo", 2048, 768, 128, 8),
]
# Marlin's int4 experts at decode sizes, where their read share matters.
MEASURED_INT4_DECODE = [
    ("qwen3-30b-a3b", "h200-sxm", 1, "int4", "int4_wo", 2048, 768, 128, 8),
    ("mixtral-8x7b", "h200-sxm", 2, "int4", "int4_wo", 4096, 14336, 8, 2),
]

# MXFP4 experts at decode sizes, where their fixed time is most of a layer's (the 0.24 tables:
# the OAI Triton kernel vLLM serves gpt-oss with on Hopper).
MEASURED_MXFP4_DECODE = [
    ("gpt-oss-120b", "h100-sxm", tp, "mxfp4", "w4a16_mxfp4", 2880, 2880, 128, 4) for tp in (2, 8)
]


def test_only_int4_experts_read_slower_than_the_other_formats():
    # Marlin's int4 MoE is ~3x slower than the read term at decode sizes in the tables; the
    # other formats keep the read rate their serving runs were validated with.
    assert moe_read_share("int4", "hopper") < 0.5
    assert moe_read_share("bf16", "hopper") == moe_read_share("fp8", "hopper") == 1.0
    assert moe_read_share("int4", "ampere") == 1.0  # no table


@pytest.mark.parametrize("case", MEASURED, ids=lambda c: f"{c[0]}-tp{c[2]}-{c[3]}")
@pytest.mark.parametrize("tokens", [64, 1024, 8192])
def test_the_expert_time_follows_the_measured_kernels(case, tokens):
    _assert_follows_the_table(case, tokens)


@pytest.mark.parametrize("case", MEASURED_INT4_DECODE, ids=lambda c: f"{c[0]}-tp{c[2]}")
@pytest.mark.parametrize("tokens", [1, 4, 16])
def test_int4_experts_at_decode_sizes_follow_the_measured_kernels(case, tokens):
    _assert_follows_the_table(case, tokens)


@pytest.mark.parametrize("case", MEASURED_MXFP4_DECODE, ids=lambda c: f"{c[0]}-tp{c[2]}")
@pytest.mark.parametrize("tokens", [1, 4])
def test_mxfp4_experts_at_decode_sizes_follow_the_measured_kernels(case, tokens):
    # Within 1.2x, which bf16's fixed time would miss (0.70-0.82 of the tables).
    _assert_follows_the_table(case, tokens, "h100_sxm/moe/vllm/0.24.0", within=1.2)


def _assert_follows_the_table(case, tokens, tables="h200_sxm/moe/vllm/0.19.0", within=1.5):
    pd = pytest.importorskip("pandas")
    aic = pytest.importorskip("aiconfigurator_core")
    slug, gpu, tp, dtype, fmt, hidden, width, experts, top_k = case
    table = Path(aic.__file__).parent / "systems/data" / tables / "moe_perf.parquet"
    df = pd.read_parquet(table)
    row = df[
        (df.distribution == "balanced")
        & (df.moe_ep_size == 1)
        & (df.moe_dtype == fmt)
        & (df.hidden_size == hidden)
        & (df.inter_size == width)
        & (df.num_experts == experts)
        & (df.topk == top_k)
        & (df.moe_tp_size == tp)
        & (df.num_tokens == tokens)
    ]
    measured_ms = float(row.latency.iloc[0])
    model_ms = _expert_layer_ms(_ctx(slug, tp=tp, gpu=gpu, dtype=dtype), slug, tokens, gpu, dtype)
    assert 1 / within < model_ms / measured_ms < within, (model_ms, measured_ms)


def test_the_fixed_time_per_format_is_what_fit_moe_floors_fits_today(monkeypatch):
    # kernels.py's _MOE_FIXED_SCALE is written by hand from bench/fit_moe_floors.py.
    pytest.importorskip("aiconfigurator_core")
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[3] / "bench"))
    import fit_moe_floors

    fits = fit_moe_floors.fit()
    assert fits
    for (dtype, generation), fitted in fits.items():
        assert moe_fixed_scale(dtype, generation) == fitted.scale, (dtype, generation)
