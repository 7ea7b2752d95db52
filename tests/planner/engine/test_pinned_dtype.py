"""A pinned layout keeps the weight dtype the user asked for, or is reported as not fitting."""

from planner.engine import plan, spec_from_dict
from planner.presentation.messages import english_text


def _spec(**extra):
    return spec_from_dict(
        {
            "model": "llama-3.1-70b",
            "weight_dtype": "bf16",
            "max_model_len": 32768,
            "workload": {"concurrency": 8},
            "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 2}]},
            **extra,
        }
    )


def test_pinned_layout_that_needs_quantization_is_reported_as_not_fitting():
    result = plan(_spec(pinned_layout={"tp": 2, "pp": 1, "replicas": 1}))
    # The recommendation may quantize (nothing fits two H100s at bf16)...
    assert result.recommendation.weight_dtype == "fp8"
    # ...but the pinned layout is judged at the dtype the user asked for.
    assert result.pinned is not None
    assert result.pinned.weight_dtype == "bf16"
    assert not result.pinned.fits
    # A layout that never starts has no speeds (issue 32: not 0 tok/s and TTFT ~1e14 ms)...
    assert result.pinned.output_throughput_tok_s is None
    assert result.pinned.ttft_ms is None
    assert result.pinned.itl_ms is None
    # ...and says why.
    assert result.pinned.rejected_reason is not None
    pinned = next(r for r in result.recommendation.reasons if r.code == "pinned_layout_no_speed")
    verdict = english_text(pinned.params["verdict"])
    assert "does not fit at bf16 weights" in verdict
    # 65.7 GiB of bf16 weights per H100 leave no KV budget once TP2's ~2 GiB of non-torch
    # buffers and the CUDA-graph estimate are counted (issue 13).
    assert any(why in verdict for why in ("KV cache holds", "leave no KV cache in the"))


def test_pinned_layout_that_fits_keeps_its_dtype():
    spec = spec_from_dict(
        {
            "model": "llama-3.1-8b",
            "weight_dtype": "bf16",
            "workload": {"concurrency": 8},
            "hardware": {"nodes": [{"hostname": "a", "gpu": "h100-sxm", "gpu_count": 2}]},
            "pinned_layout": {"tp": 2, "pp": 1, "replicas": 1},
        }
    )
    result = plan(spec)
    assert result.pinned is not None
    assert result.pinned.weight_dtype == "bf16"
    assert result.pinned.fits
