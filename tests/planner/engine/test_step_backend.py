"""The step-time backend seam: the roofline by default, measured kernel tables when asked."""

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from planner.engine import plan, spec_from_dict
from planner.engine.serving.backend import (
    BackendChoice,
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
    ctx = _ctx(**ctx_args)
    return dataclasses.replace(
        ctx, kernels=kernels, backend=BackendChoice(used=StepBackend.AICONFIGURATOR)
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
