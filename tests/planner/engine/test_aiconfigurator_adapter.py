"""The aiconfigurator adapter's arithmetic, against a stand-in for its compiled engine.

No aiconfigurator-core needed: the stand-in answers the two calls the adapter makes with simple
known laws, so what is checked is how the adapter composes and rescales them.
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.engine.serving.aiconfigurator import AicPasses, _as_library_sees, _bucket
from planner.engine.serving.backend import KernelTableMiss, StepShape

GEMM_PER_TOKEN = 0.01  # ms
ATTN_PER_PAIR = 1e-6  # ms per query×key pair
ALL_REDUCE = 0.5  # ms per pass


class Engine:
    """Per-op lists shaped like aiconfigurator's: (name, ms, energy, source)."""

    def decode_step_per_op(self, b, isl, osl):
        context = isl + osl // 2 + 1
        return [
            ("generation_qkv_gemm", GEMM_PER_TOKEN * b, 0.0, "t"),
            ("generation_attention", ATTN_PER_PAIR * b * context, 0.0, "t"),
            ("generation_ar_1", ALL_REDUCE, 0.0, "t"),
            ("generation_p2p", 99.0, 0.0, "t"),  # pipeline hops are ours, never theirs
        ]

    def mixed_step_breakdown_per_op(self, p, b, isl, osl, prefix):
        full = isl * (isl + 1) / 2
        pairs = full * p / isl if p >= isl else full / math.ceil(isl / p)
        shared = [
            ("context_ffn1_gemm", GEMM_PER_TOKEN * (p + b), 0.0, "t"),
            ("context_ar_1", ALL_REDUCE, 0.0, "t"),
        ]
        return shared, [("context_attention", ATTN_PER_PAIR * pairs, 0.0, "t")], []


def test_a_decode_pass_is_its_kernels_with_the_all_reduce_apart():
    compute, all_reduce = AicPasses(Engine()).forward_ms(
        StepShape(decode_seqs=8, decode_context=1000, prefill_tokens=0, prefill_pairs=0)
    )
    assert compute == pytest.approx(GEMM_PER_TOKEN * 8 + ATTN_PER_PAIR * 8 * 1000, rel=0.05)
    assert all_reduce == pytest.approx(ALL_REDUCE)


@given(
    decodes=st.integers(0, 200),
    context=st.integers(1, 30_000),
    chunk=st.integers(1, 8192),
    start=st.integers(0, 30_000),
)
def test_a_mixed_pass_charges_the_chunks_own_pairs_and_the_decodes_own_context(
    decodes, context, chunk, start
):
    pairs = chunk * (start + (chunk + 1) / 2)  # a chunk of `chunk` tokens after `start` cached
    shape = StepShape(
        decode_seqs=decodes, decode_context=context, prefill_tokens=chunk, prefill_pairs=pairs
    )
    compute, all_reduce = AicPasses(Engine()).forward_ms(shape)
    expected = (
        GEMM_PER_TOKEN * (chunk + decodes)
        + ATTN_PER_PAIR * pairs
        + ATTN_PER_PAIR * decodes * context
    )
    assert compute == pytest.approx(expected, rel=0.1)
    assert all_reduce == pytest.approx(ALL_REDUCE, rel=0.1)


def test_look_ups_are_cached_on_a_grid_fine_enough_to_keep_the_times():
    engine = Engine()
    calls = []
    original = engine.decode_step_per_op
    engine.decode_step_per_op = lambda *a: calls.append(a) or original(*a)
    passes = AicPasses(engine)
    for _ in range(3):
        passes.forward_ms(
            StepShape(decode_seqs=100, decode_context=4096, prefill_tokens=0, prefill_pairs=0)
        )
    assert len(calls) == 1
    assert all(abs(_bucket(x) / x - 1) < 0.025 for x in range(17, 20_000, 7))


class Refusing(Engine):
    """An engine whose library refuses what the real one refuses: contexts past 2**32 - 1."""

    def __init__(self):
        self.isl_seen = []

    def mixed_step_breakdown_per_op(self, p, b, isl, osl, prefix):
        self.isl_seen.append(isl)
        if isl > 2**32 - 1:
            raise OverflowError("out of range integral type conversion attempted")
        return super().mixed_step_breakdown_per_op(p, b, isl, osl, prefix)


def test_a_sliver_of_a_prompt_with_a_whole_prompts_pairs_stays_inside_the_models_context():
    # The steady state of a layout that holds almost nothing (issue 32: Llama-3.1-70B TP1 on
    # H100) asks for 3.2e-8 prefill tokens carrying 528 pairs: 16e9 tokens per query before.
    engine = Refusing()
    compute, _ = AicPasses(engine, max_context=131_072).forward_ms(
        StepShape(decode_seqs=0, decode_context=0, prefill_tokens=3.2e-8, prefill_pairs=528.0)
    )
    assert max(engine.isl_seen) <= 131_072
    assert math.isfinite(compute)
    assert compute >= 0


def test_a_call_the_library_refuses_is_a_miss_for_that_step_and_stays_cached():
    class Broken(Engine):
        calls = 0

        def decode_step_per_op(self, b, isl, osl):
            Broken.calls += 1
            raise ValueError(f"no data for batch {b}\n  at /site-packages/x.py")

    passes = AicPasses(Broken())
    shape = StepShape(decode_seqs=8, decode_context=100, prefill_tokens=0, prefill_pairs=0)
    for _ in range(2):
        with pytest.raises(KernelTableMiss, match="no data for batch 8$"):
            passes.forward_ms(shape)
    assert Broken.calls == 1


def test_a_time_that_is_not_a_number_is_a_miss():
    class Nan(Engine):
        def decode_step_per_op(self, b, isl, osl):
            return [("generation_qkv_gemm", float("nan"), 0.0, "t")]

    with pytest.raises(KernelTableMiss):
        AicPasses(Nan()).forward_ms(
            StepShape(decode_seqs=1, decode_context=10, prefill_tokens=0, prefill_pairs=0)
        )


def test_mistral_without_a_window_is_given_to_the_library_as_llamas_graph():
    seen = _as_library_sees({"architectures": ["MistralForCausalLM"], "sliding_window": None})
    assert seen["architectures"] == ["LlamaForCausalLM"]
    windowed = {"architectures": ["MistralForCausalLM"], "sliding_window": 4096}
    assert _as_library_sees(windowed)["architectures"] == ["MistralForCausalLM"]
