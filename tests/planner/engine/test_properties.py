"""Hypothesis properties of the memory and throughput models."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.data import load_models
from planner.engine.assumptions import GIB, Assumptions
from planner.engine.layouts import evaluate, group_nodes
from planner.engine.memory import plan_memory
from planner.engine.spec import Layout, spec_from_dict

A = Assumptions()
SLUGS = sorted(load_models())
DTYPES = ["bf16", "fp8", "int8", "int4"]
ORDER = {"bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


def _mem(slug, *, dtype="bf16", tp=1, pp=1, visible=79.19, mml=4096, util=0.9):
    return plan_memory(
        load_models()[slug].architecture,
        dtype=dtype,
        kv_cache_dtype="auto",
        tp=tp,
        pp=pp,
        visible_gib=visible,
        gpu_slug="h100-sxm",
        utilization=util,
        max_model_len=mml,
        max_num_batched_tokens=8192,
        max_num_seqs=256,
        a=A,
    )


def _tp(slug, data):
    arch = load_models()[slug].architecture
    options = [t for t in (1, 2, 4, 8) if arch.num_attention_heads % t == 0]
    return data.draw(st.sampled_from(options))


@settings(deadline=None)
@given(st.sampled_from(SLUGS), st.floats(20, 200), st.floats(0.5, 60), st.data())
def test_more_gpu_memory_never_lowers_kv_tokens(slug, visible, extra, data):
    tp = _tp(slug, data)
    assert (
        _mem(slug, tp=tp, visible=visible + extra).kv_tokens
        >= _mem(slug, tp=tp, visible=visible).kv_tokens
    )


@given(st.sampled_from(SLUGS), st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.data())
def test_lower_precision_never_raises_weight_memory(slug, d1, d2, data):
    tp = _tp(slug, data)
    hi, lo = sorted((d1, d2), key=lambda d: -ORDER[d])
    assert (
        _mem(slug, dtype=lo, tp=tp).worst.weights_bytes
        <= _mem(slug, dtype=hi, tp=tp).worst.weights_bytes
    )


@given(st.sampled_from(SLUGS), st.sampled_from(DTYPES), st.integers(1, 4))
def test_tp_never_raises_weights_per_gpu(slug, dtype, pp):
    arch = load_models()[slug].architecture
    sizes = [t for t in (1, 2, 4, 8, 16) if arch.num_attention_heads % t == 0]
    weights = [
        max(s.weights_bytes for s in _mem(slug, dtype=dtype, tp=t, pp=pp).stages) for t in sizes
    ]
    assert all(b <= a + 1 for a, b in zip(weights, weights[1:], strict=False))


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["qwen2.5-7b", "llama-3.1-8b", "qwen3-30b-a3b", "qwen2.5-32b"]),
    st.sampled_from([1, 2, 4]),
    st.integers(1, 7),
    st.integers(1, 256),
)
def test_replicas_never_lower_total_throughput(slug, tp, replicas, concurrency):
    spec = spec_from_dict(
        {
            "model": slug,
            "max_model_len": 4096,
            "workload": {"concurrency": concurrency},
            "hardware": {"node_count": 8, "gpus_per_node": 8, "gpu": "h100-sxm"},
        }
    )
    group = group_nodes(spec.hardware.nodes)[0]

    def run(r):
        return evaluate(
            spec,
            group,
            Layout(tp=tp, pp=1, replicas=r),
            dtype="bf16",
            a=A,
            pinned=True,
        )

    a, b = run(replicas), run(replicas + 1)
    assert b.output_throughput_tok_s >= a.output_throughput_tok_s * (1 - 1e-9)
    assert b.capacity_output_tok_s >= a.capacity_output_tok_s * (1 - 1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(SLUGS),
    st.sampled_from(DTYPES),
    st.sampled_from([1, 2, 4, 8]),
    st.integers(1, 4),
    st.sampled_from([24.0, 48.0, 79.19, 139.8]),
    st.sampled_from([2048, 8192, 32768]),
    st.floats(0.5, 0.98),
)
def test_a_fitting_layout_fits_its_own_arithmetic(slug, dtype, tp, pp, visible, mml, util):
    arch = load_models()[slug].architecture
    if arch.num_attention_heads % tp or pp > arch.num_layers:
        return
    mem = _mem(slug, dtype=dtype, tp=tp, pp=pp, visible=visible, mml=min(mml, 40960), util=util)
    if not mem.fits:
        return
    for stage in mem.stages:
        used = (
            stage.weights_bytes
            + stage.activation_bytes
            + stage.non_torch_bytes
            + stage.cuda_graph_bytes
            + mem.kv_tokens * stage.kv_bytes_per_token
        )
        assert used <= visible * GIB * util + 1
    assert mem.kv_tokens >= min(mml, 40960)
    assert mem.kv_tokens % 16 == 0
    worst = mem.worst
    assert mem.max_concurrency == worst.blocks / worst.blocks_per_request
    # A request holds its whole length in full attention; windowed layers beside full ones
    # (gpt-oss) add their window's blocks.
    full_request = math.ceil(min(mml, 40960) / 16)
    if not arch.is_hybrid:
        assert worst.blocks_per_request == full_request
    elif 0 in arch.layer_windows:
        assert worst.blocks_per_request > full_request
