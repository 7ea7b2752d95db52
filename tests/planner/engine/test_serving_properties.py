"""Properties of the serving model (planner/engine/serving) that must hold for any workload."""

import dataclasses
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.data import load_models
from catalog.hf_config import from_hf_config
from planner.engine import plan
from planner.engine.assumptions import Assumptions
from planner.engine.memory import plan_memory
from planner.engine.network import inter_node_link, intra_node_link
from planner.engine.serving import build_context, predict, steady_state
from planner.engine.serving.predict import SCAN_LEVELS, saturation
from planner.engine.serving.step import decode_step_ms
from planner.engine.spec import NetworkOverrides, Nic, Node, Workload, catalog_gpu, spec_from_dict
from tests.planner.engine.conftest import LLAMA_8B_CONFIG

A = Assumptions()
# The engine's own links of an H100 node with a 25 GbE data NIC.
_NODE = Node(
    hostname="a", gpu=catalog_gpu("h100-sxm"), gpu_count=8, nics=(Nic(name="eth1", speed_gbps=25),)
)
NVLINK = intra_node_link(_NODE, A, NetworkOverrides())
SLOW = inter_node_link([_NODE], A, NetworkOverrides())


@cache
def _ctx(slug="llama-3.1-8b", tp=1, link=NVLINK, gpu="h100-sxm", dtype="bf16"):
    return _ctx_of(load_models()[slug].architecture, tp, link, gpu, dtype)


def _ctx_of(arch, tp=1, link=NVLINK, gpu="h100-sxm", dtype="bf16"):
    g = catalog_gpu(gpu)
    mem = plan_memory(
        arch,
        dtype=dtype,
        kv_cache_dtype="auto",
        tp=tp,
        pp=1,
        visible_gib=g.driver_visible_gib,
        gpu_slug=g.slug,
        utilization=0.9,
        max_model_len=8192,
        max_num_batched_tokens=8192,
        max_num_seqs=256,
        a=A,
    )
    return build_context(
        arch,
        g,
        mem,
        tp=tp,
        pp=1,
        tp_link=link,
        pp_link=link,
        dtype=dtype,
        max_num_seqs=256,
        max_num_batched_tokens=8192,
        a=A,
        overlap=0.0,
    )


lengths = st.tuples(st.integers(16, 4096), st.integers(8, 1024))


@settings(max_examples=30, deadline=None)
@given(lengths, st.integers(1, 512), st.integers(1, 512))
def test_more_concurrency_never_lowers_ttft_p95(lens, c1, c2):
    wl = Workload(avg_input_tokens=lens[0], avg_output_tokens=lens[1])
    lo, hi = sorted((c1, c2))
    assert steady_state(_ctx(), wl, hi).ttft_p95_ms >= steady_state(_ctx(), wl, lo).ttft_p95_ms


@settings(max_examples=10, deadline=None)
@given(lengths)
def test_simulated_ttft_p95_grows_with_concurrency(lens):
    wl = Workload(avg_input_tokens=lens[0], avg_output_tokens=lens[1], num_requests=64)
    p95 = [
        predict(_ctx(), dataclasses.replace(wl, concurrency=c), scan=False).ttft_p95_ms
        for c in (1, 4, 16, 64)
    ]
    assert all(b >= a * 0.999 for a, b in zip(p95, p95[1:], strict=False))


@settings(max_examples=30, deadline=None)
@given(lengths, st.sampled_from(["llama-3.1-8b", "qwen3-30b-a3b", "qwen2.5-32b"]))
def test_throughput_never_falls_below_a_lower_concurrency_up_to_saturation(lens, slug):
    ctx = _ctx(slug)
    wl = Workload(avg_input_tokens=lens[0], avg_output_tokens=lens[1])
    curve = [(c, steady_state(ctx, wl, c)) for c in SCAN_LEVELS]
    sat = saturation(curve)
    below = [s.output_tok_s for c, s in curve if c <= sat]
    assert all(b >= a * 0.999 for a, b in zip(below, below[1:], strict=False))


@settings(max_examples=30, deadline=None)
@given(lengths, st.integers(1, 256), st.sampled_from([2, 4]))
def test_a_faster_link_never_slows_a_layout(lens, concurrency, tp):
    wl = Workload(avg_input_tokens=lens[0], avg_output_tokens=lens[1])
    slow = steady_state(_ctx("qwen2.5-32b", tp, SLOW), wl, concurrency)
    fast = steady_state(_ctx("qwen2.5-32b", tp, NVLINK), wl, concurrency)
    assert fast.tpot_ms <= slow.tpot_ms
    assert fast.ttft_ms <= slow.ttft_ms
    assert fast.output_tok_s >= slow.output_tok_s


@settings(max_examples=10, deadline=None)
@given(lengths, st.integers(1, 200), st.integers(1, 200))
def test_a_bigger_burst_never_waits_less(lens, n1, n2):
    small, big = sorted((n1, n2))

    def ttft(n):
        wl = Workload(
            avg_input_tokens=lens[0], avg_output_tokens=lens[1], arrival="burst", burst_size=n
        )
        p = predict(_ctx(), wl, scan=False)
        return p.ttft_p50_ms, p.ttft_p95_ms

    assert ttft(big)[1] >= ttft(small)[1] * 0.999


def test_only_a_model_whose_every_layer_slides_reads_a_window_of_kv():
    mistral = {**LLAMA_8B_CONFIG, "model_type": "mistral", "max_position_embeddings": 32768}
    sliding = _ctx_of(from_hf_config({**mistral, "sliding_window": 4096}))
    full = _ctx_of(from_hf_config(mistral))
    hybrid = _ctx_of(from_hf_config({**mistral, "model_type": "gemma2", "sliding_window": 4096}))

    assert (sliding.sliding_window, full.sliding_window, hybrid.sliding_window) == (4096, 0, 0)
    assert decode_step_ms(sliding, 32, 16_000) < decode_step_ms(full, 32, 16_000)
    assert decode_step_ms(sliding, 32, 2_000) == decode_step_ms(full, 32, 2_000)


def test_the_decode_breakdown_of_a_sliding_window_model_reads_the_window_only():
    config = {
        **LLAMA_8B_CONFIG,
        "model_type": "mistral",
        "max_position_embeddings": 32768,
        "sliding_window": 4096,
    }
    spec = spec_from_dict(
        {
            "model": {"hf_config": config, "name": "mistralai/Mistral-7B-v0.1"},
            "max_model_len": 32768,
            "workload": {"concurrency": 8, "avg_input_tokens": 16000, "avg_output_tokens": 256},
            "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 1}]},
        }
    )
    best = plan(spec).best

    # One GPU: no communication, so the compute part of a decode step is at most the whole step
    # (equal when vLLM's asynchronous scheduler hides the engine's CPU work behind the GPU's).
    assert best.comm_per_decode_step_ms == 0.0
    assert 0 < best.decode_compute_ms <= best.decode_step_ms


def test_a_closed_loop_client_sends_its_next_request_after_the_round_trip():
    from planner.engine.serving.simulate import simulate

    ctx = _ctx()
    one = simulate(ctx, [(0.0, 512, 16, 0)], closed_concurrency=1).duration_ms
    two = simulate(ctx, [(0.0, 512, 16, 0)] * 2, closed_concurrency=1).duration_ms
    # The second request reaches the scheduler one request overhead after the first finished.
    assert two == pytest.approx(2 * one + ctx.request_overhead_ms, rel=1e-6)


def test_a_closed_loop_of_equal_outputs_keeps_prefilling_in_waves():
    from planner.engine.serving.simulate import simulate

    ctx = _ctx()
    # 8 clients, prompts of a quarter of the token budget: each wave needs two prefill steps.
    sim = simulate(ctx, [(0.0, 2048, 256, 0)] * 32, closed_concurrency=8)
    ttft = [f.ttft_ms for f in sim.finished]
    first, later = ttft[:8], ttft[8:]
    # The replacements of a finished wave pile up behind its first prefill step and are
    # prefilled together again, as the first wave was (not one by one next to the decodes).
    assert sum(later) / len(later) >= 0.8 * sum(first) / len(first)
    assert max(later) >= 0.9 * max(first)


@pytest.mark.parametrize(("requests", "rate"), [(120, 1.0), (360, 3.0), (50, 0.5)])
def test_a_poisson_load_is_simulated_over_its_expected_span(requests, rate):
    # A seeded draw of n gaps spans n/rate ± √n/rate; stretched to n/rate, a light load's
    # throughput is the expected run's: its requests over the span plus the last one's latency.
    wl = Workload(
        concurrency=1,
        avg_input_tokens=512,
        avg_output_tokens=64,
        arrival="poisson",
        request_rate_per_s=rate,
        num_requests=requests,
    )
    pred = predict(_ctx(), wl, scan=False)
    expected_s = requests / rate + pred.e2e_p50_ms / 1e3
    assert pred.requests_per_s == pytest.approx(requests / expected_s, rel=0.025)
