"""The measured-kernel backend over every catalog model × GPU × TP its tables cover (issue 32).

Every layout either times every step shape a plan asks for (a finite time, or a miss that the
roofline takes over) or is refused as a whole for a reason the tables give; nothing raises.
The refusals are pinned down by kind, so a new kind of failure shows up here first.
"""

import importlib.util
import math
import re

import pytest

from catalog.data import load_models
from planner.engine.serving import aiconfigurator
from planner.engine.serving.backend import BackendUnavailable, KernelTableMiss, StepShape
from planner.engine.spec import CHECKPOINT_ONLY_DTYPES, catalog_gpu, valid_tp_sizes

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("aiconfigurator_core") is None,
    reason="the optional aiconfigurator extra is not installed",
)

# One step of each kind a plan times: a lone decode, a full decode batch at long context, a
# full prefill budget, the sliver of a prompt a non-fitting layout's steady state asks for, a
# mixed step, and a long single prompt.
SHAPES = (
    StepShape(decode_seqs=1, decode_context=100, prefill_tokens=0, prefill_pairs=0),
    StepShape(decode_seqs=512, decode_context=8000, prefill_tokens=0, prefill_pairs=0),
    StepShape(decode_seqs=0, decode_context=0, prefill_tokens=8192, prefill_pairs=8192 * 4096),
    StepShape(decode_seqs=0, decode_context=0, prefill_tokens=3.2e-8, prefill_pairs=528.0),
    StepShape(decode_seqs=1e-9, decode_context=4e3, prefill_tokens=1e-9, prefill_pairs=1e6),
    StepShape(decode_seqs=64, decode_context=2000, prefill_tokens=2048, prefill_pairs=2048 * 5000),
    StepShape(decode_seqs=0, decode_context=0, prefill_tokens=2048, prefill_pairs=2048 * 120_000),
)
# What the tables of aiconfigurator-core 0.12 do not hold, and why that is not ours to fix:
REFUSALS = {
    # no bf16 MoE kernels measured for DeepSeek's experts (it ships in FP8), nor for
    # Qwen3-30B-A3B's at TP8 on A100;
    "moe-data-missing": re.compile(r"MoE data missing"),
    # 128×128 FP8 blocks across TP shards of 1536/8 = 192 or 768/4 columns: vLLM refuses these
    # too ("not divisible by weight quantization block_n"), serving them with expert parallelism.
    "fp8-block-split": re.compile(r"Invalid quantized MoE configuration"),
    # no sliding-window decode attention measured on the A100 (gpt-oss: 64-dim heads, 128-token
    # window).
    "attention-data-missing": re.compile(r"generation attention data missing"),
}


def _dtypes(arch, fp8_support: bool) -> tuple[str, ...]:
    """Return the weight formats a plan serves `arch` in: an MXFP4 checkpoint only as stored."""
    if arch.checkpoint_quantization in CHECKPOINT_ONLY_DTYPES:
        return (arch.checkpoint_quantization,)
    return ("bf16", "fp8") if fp8_support else ("bf16",)


def _layouts():
    for slug, model in sorted(load_models().items()):
        arch = model.architecture
        for gpu_slug in sorted(aiconfigurator.SYSTEMS):
            gpu = catalog_gpu(gpu_slug)
            for dtype in _dtypes(arch, gpu.fp8_support):
                for tp in valid_tp_sizes(arch, 8):
                    yield slug, model.config, gpu_slug, dtype, tp


LAYOUTS = list(_layouts())


def _kind(reason: str) -> str:
    return next((k for k, rx in REFUSALS.items() if rx.search(reason)), reason)


def test_every_layout_is_timed_or_refused_for_a_known_reason():
    refused: dict[str, list[tuple]] = {}
    timed = 0
    for slug, config, gpu_slug, dtype, tp in LAYOUTS:
        try:
            kernels = aiconfigurator.kernel_times(
                hf_config=config,
                gpu_slug=gpu_slug,
                tp=tp,
                dtype=dtype,
                kv_cache_dtype="auto",
                nvlink_tp=True,
            )
        except BackendUnavailable as exc:
            refused.setdefault(_kind(str(exc)), []).append((slug, gpu_slug, dtype, tp))
            continue
        for shape in SHAPES:
            try:
                compute, all_reduce = kernels.forward_ms(shape)
            except KernelTableMiss:
                continue  # the roofline times this step (test_step_backend.py)
            where = (slug, gpu_slug, dtype, tp, shape)
            assert math.isfinite(compute), where
            assert compute >= 0, where
            assert math.isfinite(all_reduce)
            assert all_reduce >= 0
        timed += 1
    assert set(refused) <= set(REFUSALS), {k: v for k, v in refused.items() if k not in REFUSALS}
    # Most layouts are covered: every refusal above is a DeepSeek bf16, an FP8-block MoE split,
    # Qwen3-30B-A3B TP8 on A100 or gpt-oss on A100.
    assert timed >= 0.85 * len(LAYOUTS), (timed, len(LAYOUTS))


@pytest.mark.parametrize(
    ("slug", "gpu_slug", "dtype", "tp"),
    [
        ("mistral-7b", "h100-sxm", "bf16", 1),  # Llama's graph under another name
        ("mistral-7b", "l40s", "fp8", 2),
        ("llama-3.1-70b", "h800-sxm", "fp8", 8),  # H100 silicon, the link model's all-reduce
        ("mixtral-8x7b", "a100-80g-sxm", "bf16", 2),
        ("qwen3-235b-a22b", "h200-sxm", "fp8", 4),
        ("deepseek-r1", "h200-sxm", "fp8", 8),
    ],
)
def test_layouts_the_tables_hold_are_timed_by_them(slug, gpu_slug, dtype, tp):
    kernels = aiconfigurator.kernel_times(
        hf_config=load_models()[slug].config,
        gpu_slug=gpu_slug,
        tp=tp,
        dtype=dtype,
        kv_cache_dtype="auto",
        nvlink_tp=True,
    )
    assert kernels.owns_all_reduce is (gpu_slug != "h800-sxm")
    compute, _ = kernels.forward_ms(SHAPES[1])
    assert compute > 0
