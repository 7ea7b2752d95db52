"""vLLM's CUDA-graph estimate by GPU vendor, model runner and capture sizes (profiling.py)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog.data import GpuVendor, load_gpus, load_models
from planner.engine import plan, spec_from_dict
from planner.engine.assumptions import GIB, Assumptions
from planner.engine.memory import (
    cuda_graph_count,
    cuda_graph_gib,
    cudagraph_capture_sizes,
    plan_memory,
)
from planner.engine.messages import Code
from planner.engine.profiling import CudaGraphRule, profiling_rules
from planner.engine.spec import SpecError

# version, vendor, dense or MoE, the rule vLLM follows
RULE_TABLE = """
0.19.0 NVIDIA dense captured_after
0.19.0 AMD    dense captured_after
0.22.0 NVIDIA dense subtracted
0.22.0 AMD    dense skipped_platform
0.25.1 AMD    moe   skipped_platform
0.26.0 AMD    moe   subtracted
0.27.1 Intel  moe   skipped_platform
0.27.1 other  moe   skipped_platform
0.25.0 NVIDIA dense subtracted
0.25.1 NVIDIA dense runner_v2_zero
0.27.1 NVIDIA moe   subtracted
0.29.0 NVIDIA dense subtracted
"""
RULE_CASES = [line.split() for line in RULE_TABLE.strip().splitlines()]


@pytest.mark.parametrize(("version", "vendor", "kind", "rule"), RULE_CASES)
def test_the_graph_rule_follows_version_vendor_and_runner(version, vendor, kind, rule):
    rules = profiling_rules(version, GpuVendor(vendor), moe=kind == "moe")
    assert rules.cuda_graph_rule == rule
    assert rules.subtract_cuda_graphs == (rule == CudaGraphRule.SUBTRACTED)


def test_the_catalog_names_mi300x_amd_and_the_h100_nvidia():
    gpus = load_gpus()
    assert gpus["mi300x"].vendor == GpuVendor.AMD
    assert gpus["h100-sxm"].vendor == GpuVendor.NVIDIA
    assert all(isinstance(g.vendor, GpuVendor) for g in gpus.values())


def _memory(vendor, version="0.22.0", **kw):
    arch = load_models()["llama-3.1-8b"].architecture
    args = {
        "dtype": "bf16",
        "kv_cache_dtype": "auto",
        "tp": 1,
        "pp": 1,
        "visible_gib": 191.5,
        "gpu_slug": "mi300x",
        "utilization": 0.9,
        "max_model_len": 8192,
        "max_num_batched_tokens": None,
        "max_num_seqs": None,
        "a": Assumptions(),
        "vllm_version": version,
        "vendor": vendor,
    }
    return plan_memory(arch, **{**args, **kw})


def test_rocm_keeps_the_graph_estimate_in_the_kv_budget_on_0_22():
    amd, nvidia = _memory(GpuVendor.AMD), _memory(GpuVendor.NVIDIA)
    assert amd.worst.cuda_graph_bytes == 0
    assert nvidia.worst.cuda_graph_bytes > 0.3 * GIB
    assert amd.kv_tokens > nvidia.kv_tokens
    assert "not estimated" in amd.rules.description


def test_rocm_subtracts_like_cuda_once_it_profiles_graphs_again():
    # 0.26-0.28 run a dense model on Model Runner V2 (estimate 0) on either vendor.
    amd, nvidia = _memory(GpuVendor.AMD, "0.29.0"), _memory(GpuVendor.NVIDIA, "0.29.0")
    assert amd.worst.cuda_graph_bytes == nvidia.worst.cuda_graph_bytes > 0


def test_capture_sizes_are_vllms_defaults():
    # "Profiling CUDA graph memory: PIECEWISE=5 (largest=16)" at max_num_seqs 8 (club-3090 #127).
    assert cudagraph_capture_sizes(8, 8192) == [1, 2, 4, 8, 16]
    default = cudagraph_capture_sizes(1024, 8192)
    assert (default[-1], len(default)) == (512, 51)
    assert cudagraph_capture_sizes(192, 8192)[-1] == 384
    assert cudagraph_capture_sizes(1024, 128)[-1] == 128  # capped by max_num_batched_tokens
    # Piecewise graphs for every size, full decode graphs up to max_num_seqs.
    assert cuda_graph_count(8, 8192) == 5 + 4
    assert cuda_graph_count(1024, 8192) == 102


def test_a_small_max_num_seqs_is_not_charged_the_estimate_of_512_capture_sizes():
    arch_layers = 28
    a = Assumptions()
    full = cuda_graph_gib(arch_layers, a)
    small = cuda_graph_gib(arch_layers, a, cuda_graph_count(8, 8192))
    assert full == pytest.approx(a.cuda_graph_base_gib + a.cuda_graph_per_layer_gib * 28)
    assert small < full * 0.5
    assert small >= a.cuda_graph_base_gib
    seqs_8 = _memory(GpuVendor.NVIDIA, max_num_seqs=8)
    seqs_1024 = _memory(GpuVendor.NVIDIA, max_num_seqs=1024)
    assert seqs_8.worst.cuda_graph_bytes < seqs_1024.worst.cuda_graph_bytes


@given(
    st.integers(1, 2048),
    st.integers(1, 2048),
    st.integers(16, 65536),
    st.integers(1, 160),
)
def test_more_sequences_never_lower_the_graph_estimate(seqs, more, tokens, layers):
    a = Assumptions()
    low = cuda_graph_gib(layers, a, cuda_graph_count(seqs, tokens))
    high = cuda_graph_gib(layers, a, cuda_graph_count(seqs + more, tokens))
    assert 0 < a.cuda_graph_base_gib <= low <= high


def _spec(gpu, version):
    return {
        "model": "llama-3.1-8b",
        "vllm_version": version,
        "hardware": {"nodes": [{"hostname": "a", "gpu": gpu, "gpu_count": 1}]},
    }


def test_the_plan_says_which_graph_rule_it_applied_on_an_mi300x():
    result = plan(spec_from_dict(_spec("mi300x", "0.22.0")))
    assert not result.memory_rules.cuda_graphs_subtracted
    codes = [m.code for m in result.recommendation.reasons]
    assert Code.CUDA_GRAPHS_SKIPPED_PLATFORM in codes
    on_h100 = plan(spec_from_dict(_spec("h100-sxm", "0.22.0")))
    assert on_h100.memory_rules.cuda_graphs_subtracted
    assert Code.CUDA_GRAPHS_SKIPPED_PLATFORM not in [m.code for m in on_h100.recommendation.reasons]


def test_a_dense_model_on_runner_v2_says_its_estimate_is_zero():
    result = plan(spec_from_dict(_spec("h100-sxm", "0.27.1")))
    assert Code.CUDA_GRAPHS_RUNNER_V2 in [m.code for m in result.recommendation.reasons]


def test_a_custom_gpu_names_its_vendor_and_a_bad_one_is_refused_naming_the_field():
    spec = _spec({"slug": "mi300x"}, "0.22.0")
    assert spec_from_dict(spec).hardware.nodes[0].gpu.vendor == GpuVendor.AMD
    custom = _spec({"slug": "x", "memory_gib": 64, "vendor": "AMD"}, "0.22.0")
    assert spec_from_dict(custom).hardware.nodes[0].gpu.vendor == GpuVendor.AMD
    with pytest.raises(SpecError) as err:
        spec_from_dict(_spec({"slug": "x", "memory_gib": 64, "vendor": "Acme"}, "0.22.0"))
    assert any(k.endswith("gpu.vendor") for k in err.value.errors)
