"""The step-time backend seam: the roofline by default, measured kernel tables when asked."""

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from planner.engine import plan, spec_from_dict
from planner.engine.serving.backend import (
    BackendChoice,
    KernelTableMiss,
    KernelTimes,
    StepBackend,
    StepShape,
    resolve_kernels,
)
from planner.engine.serving.context import tp_comm_ms
from planner.engine.serving.replay import replay, replay_context
from planner.engine.serving.step import step_ms
from planner.engine.spec import SpecError
from tests.planner.engine.test_serving_properties import SLOW, _ctx

HAVE_AIC = importlib.util.find_spec("aiconfigurator_core") is not None
RUNS = json.loads((Path(__file__).parent / "fixtures" / "serving_runs.json").read_text())["runs"]


def _fixed(*, owns_all_reduce: bool) -> tuple[KernelTimes, list[StepShape]]:
    """Return tables of 1 ms per token plus 0.5 ms of all-reduce, and the shapes they saw."""
    seen: list[StepShape] = []

    def forward_ms(shape: StepShape) -> tuple[float, float]:
        seen.append(shape)
        return shape.decode_seqs + shape.prefill_tokens, 0.5

    return KernelTimes(forward_ms=forward_ms, owns_all_reduce=owns_all_reduce, source="t"), seen


def _with(kernels, **ctx_args):
    # A synchronous engine (vLLM before 0.12): its CPU work adds to the GPU's every step.
    ctx = _ctx(**ctx_args)
    return dataclasses.replace(
        ctx,
        kernels=kernels,
        backend=BackendChoice(used=StepBackend.AICONFIGURATOR),
        async_scheduling=False,
    )


def _step(ctx, **kw):
    args = dict(
        decode_seqs=4, prefill_tokens=0, kv_read_tokens=4000, attn_pairs=4000, running_seqs=4
    )
    return step_ms(ctx, **{**args, **kw})


def test_measured_kernels_replace_the_roofline_and_keep_host_overheads():
    kernels, seen = _fixed(owns_all_reduce=True)
    ctx = _with(kernels)
    host = ctx.step_overhead_ms + 4 * ctx.per_seq_overhead_ms
    assert _step(ctx) == pytest.approx(4 + 0.5 + host)
    assert _step(ctx, prefill_tokens=100, attn_pairs=9000, decode_kv_tokens=4000) == pytest.approx(
        104 + 0.5 + host
    )
    shape = seen[-1]
    assert shape.decode_context == pytest.approx(1000)
    assert shape.prefill_pairs == pytest.approx(5000)


def test_with_asynchronous_scheduling_the_host_work_hides_behind_the_measured_pass():
    ctx = dataclasses.replace(_with(_fixed(owns_all_reduce=True)[0]), async_scheduling=True)
    host = ctx.step_overhead_ms + 4 * ctx.per_seq_overhead_ms
    assert _step(ctx) == pytest.approx(max(4 + 0.5, host))


def test_off_nvlink_the_link_model_times_the_all_reduce():
    ctx = _with(_fixed(owns_all_reduce=False)[0], tp=2, link=SLOW)
    host = ctx.step_overhead_ms + 4 * ctx.per_seq_overhead_ms
    assert _step(ctx) == pytest.approx(4 + tp_comm_ms(ctx, 4) + host)


def _resolve(backend, *, gpu_slug, hf_config=None, tp_link_kind="nvlink"):
    return resolve_kernels(
        backend,
        hf_config=hf_config,
        gpu_slug=gpu_slug,
        tp=1,
        dtype="bf16",
        kv_cache_dtype="auto",
        tp_link_kind=tp_link_kind,
    )


def test_roofline_is_the_default_and_needs_nothing():
    kernels, choice = _resolve(StepBackend.ROOFLINE, gpu_slug="h100-sxm")
    assert kernels is None
    assert choice == BackendChoice()
    pred = plan(spec_from_dict(_spec())).best.serving
    assert pred.step_backend is StepBackend.ROOFLINE


def test_a_layout_the_tables_do_not_cover_keeps_the_roofline_and_says_why():
    kernels, choice = _resolve(
        StepBackend.AICONFIGURATOR,
        gpu_slug="rtx-4090",
        hf_config={"architectures": ["LlamaForCausalLM"]},
        tp_link_kind="pcie",
    )
    assert kernels is None
    assert choice.requested is StepBackend.AICONFIGURATOR
    assert choice.used is StepBackend.ROOFLINE
    assert ("rtx-4090" if HAVE_AIC else "not installed") in choice.note


def _spec(**extra):
    return {
        "model": "llama-3.1-8b",
        "workload": {"concurrency": 8, "avg_input_tokens": 512, "avg_output_tokens": 128},
        "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 1}]},
        **extra,
    }


def test_an_unknown_backend_names_the_field():
    with pytest.raises(SpecError) as err:
        spec_from_dict(_spec(step_backend="vidur"))
    assert "step_backend" in err.value.errors


def test_asking_for_aiconfigurator_without_the_package_names_the_field(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "aiconfigurator_core" else real(name, *a),
    )
    with pytest.raises(SpecError) as err:
        spec_from_dict(_spec(step_backend="aiconfigurator"))
    assert "aiconfigurator-core" in err.value.errors["step_backend"]


@pytest.mark.skipif(not HAVE_AIC, reason="the optional aiconfigurator extra is not installed")
def test_aiconfigurator_times_a_published_run_within_its_tolerance():
    run = next(r for r in RUNS if r["id"] == "dl-qwen2.5-7b-tp1-test5-n100-1024x1024")
    ctx = replay_context(run, backend=StepBackend.AICONFIGURATOR)
    assert ctx.backend.used is StepBackend.AICONFIGURATOR
    pred = replay(run, backend=StepBackend.AICONFIGURATOR)
    assert pred.step_backend is StepBackend.AICONFIGURATOR
    assert pred.tpot_mean_ms == pytest.approx(run["measured"]["tpot_mean_ms"], rel=0.2)
    assert pred.output_tok_s == pytest.approx(run["measured"]["output_tok_s"], rel=0.2)


@pytest.mark.skipif(not HAVE_AIC, reason="the optional aiconfigurator extra is not installed")
def test_plan_with_aiconfigurator_reports_the_tables_it_used():
    pred = plan(spec_from_dict(_spec(step_backend="aiconfigurator"))).best.serving
    assert pred.step_backend is StepBackend.AICONFIGURATOR
    assert "h100_sxm" in pred.step_backend_note


def test_a_step_the_tables_refuse_is_timed_by_the_roofline_and_counted():
    def refuse(shape: StepShape) -> tuple[float, float]:
        raise KernelTableMiss("no data for this shape")

    kernels = KernelTimes(forward_ms=refuse, owns_all_reduce=True, source="t")
    ctx = _with(kernels)
    roofline = _step(dataclasses.replace(ctx, kernels=None))
    assert _step(ctx) == pytest.approx(roofline)
    assert kernels.fallbacks.steps == 1
    assert kernels.fallbacks.reason == "no data for this shape"


@pytest.mark.skipif(not HAVE_AIC, reason="the optional aiconfigurator extra is not installed")
def test_a_prediction_says_how_many_steps_the_roofline_timed_instead_of_the_tables(monkeypatch):
    from planner.engine.serving import aiconfigurator

    calls = []

    def flaky(self, shape):
        calls.append(shape)
        if shape.prefill_tokens > 0:
            raise KernelTableMiss("no prefill data")
        return shape.decode_seqs * 0.1 + 5.0, 0.1

    monkeypatch.setattr(aiconfigurator.AicPasses, "forward_ms", flaky)
    pred = plan(spec_from_dict(_spec(step_backend="aiconfigurator"))).best.serving
    assert calls
    assert pred.step_backend is StepBackend.AICONFIGURATOR
    notice = pred.step_backend_notice
    assert notice is not None
    assert notice.code == "step_backend_fallback"
    assert notice.params["steps"] > 0
    assert notice.params["reason"] == "no prefill data"
    assert plan(spec_from_dict(_spec())).best.serving.step_backend_notice is None


# Issue 32: each of these raised OverflowError inside mixed_step_breakdown_per_op (the API
# answered 500): the steady state of a layout holding almost nothing asked for a prompt of 1e10+
# tokens. (model, GPU, GPUs, pinned TP, input, output, in flight)
ISSUE_32_CRASHES = [
    ("llama-3.1-70b", "h100-sxm", 8, 4, 32, 128, 8),
    ("mixtral-8x7b", "h100-sxm", 8, 2, 512, 128, 64),
    ("qwen3-235b-a22b", "h200-sxm", 8, 4, 512, 128, 64),
    ("qwen3-235b-a22b", "h200-sxm", 8, 8, 512, 128, 64),
    ("deepseek-r1", "h200-sxm", 8, 8, 512, 128, 64),
]


@pytest.mark.skipif(not HAVE_AIC, reason="the optional aiconfigurator extra is not installed")
@pytest.mark.parametrize(("model", "gpu", "count", "tp", "n_in", "n_out", "conc"), ISSUE_32_CRASHES)
def test_the_layouts_that_crashed_the_tables_plan(model, gpu, count, tp, n_in, n_out, conc):
    spec = {
        "model": model,
        "workload": {"concurrency": conc, "avg_input_tokens": n_in, "avg_output_tokens": n_out},
        "hardware": {"nodes": [{"hostname": "a", "gpu": gpu, "gpu_count": count}]},
        "step_backend": "aiconfigurator",
        "pinned_layout": {"tp": tp, "pp": 1},
    }
    result = plan(spec_from_dict(spec))
    assert result.pinned is not None
    assert result.pinned.serving is not None
    assert result.pinned.serving.step_backend is StepBackend.AICONFIGURATOR
    assert result.pinned.serving.tpot_mean_ms > 0
