"""Kernel speed per weight dtype per GPU generation: how fast a quantized GEMM runs.

Decode reads the weights at their stored width; prefill multiplies at the tensor-core rate of
the compute dtype. Weight-only formats (AWQ/GPTQ int4 Marlin, fp8 Marlin on GPUs without fp8
tensor cores) dequantize to 16 bit, so they read fewer bytes but compute at the bf16 rate and pay
a dequantization tax. Factors are relative to the datasheet's dense BF16 TFLOPS and to the HBM
bandwidth the bf16 kernels reach.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.generations import GENERATIONS, gpu_generation

__all__ = [
    "GENERATIONS",
    "KernelSpeed",
    "gpu_generation",
    "kernel_speed",
    "moe_compute_share",
    "moe_fixed_scale",
    "moe_read_share",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelSpeed:
    """Multipliers of the bf16 tensor rate (compute) and of the reachable HBM rate (memory)."""

    compute: float
    memory: float


# (dtype, generation) -> speed. fp8 on Hopper/Ada/Blackwell runs native FP8 tensor cores (2× the
# dense BF16 rate on the datasheet, ~1.6× reached in vLLM's cutlass scaled-mm); on Ampere vLLM
# serves fp8 checkpoints weight-only through Marlin. int4 (AWQ/GPTQ Marlin) dequantizes in the
# GEMM; mxfp4 is native only on Blackwell.
# The serving runs, not the tables, set these: aiconfigurator-core's measured vLLM dense GEMMs
# (bench/compare_fp8_kernels.py) make fp8 decode only 1.35-1.6× faster than bf16 on H100/H200
# (memory ≈ 0.75, not 0.97) and prefill 1.4-1.75× (compute ≈ 1.55); an FP8 MoE served on H100
# PCIe (tests/planner/engine/fixtures/serving_runs.json) fits 0.97 (TPOT +10 %) and not 0.75
# (+35 %), and so does a dense one: Llama-3.1-70B-FP8 on one H100 (vLLM 0.5.4,
# serving_load_runs.json) decodes at 32.8 ms, 32.6 ms at 0.97 and 40.2 ms at 0.75
# (docs/benchmarks.md).
_TABLE: dict[tuple[str, str], KernelSpeed] = {
    ("fp8", "hopper"): KernelSpeed(compute=1.6, memory=0.97),
    # B200: aiconfigurator-core 0.12's vLLM 0.24 GEMM tables time fp8 at 0.93-1.41x bf16 for
    # m = 1024-8192 (mean 1.15 over Llama-8B's layer shapes), far from the datasheet's 2x.
    ("fp8", "blackwell"): KernelSpeed(compute=1.2, memory=0.97),
    ("fp8", "ada"): KernelSpeed(compute=1.5, memory=0.95),
    ("fp8", "ampere"): KernelSpeed(compute=0.9, memory=0.9),
    ("int8", "hopper"): KernelSpeed(compute=1.5, memory=0.95),
    ("int8", "blackwell"): KernelSpeed(compute=1.5, memory=0.95),
    ("int8", "ada"): KernelSpeed(compute=1.5, memory=0.95),
    ("int8", "ampere"): KernelSpeed(compute=1.6, memory=0.95),
    ("int4", "hopper"): KernelSpeed(compute=0.8, memory=0.85),
    ("int4", "blackwell"): KernelSpeed(compute=0.8, memory=0.85),
    ("int4", "ada"): KernelSpeed(compute=0.85, memory=0.85),
    ("int4", "ampere"): KernelSpeed(compute=0.85, memory=0.85),
    ("mxfp4", "blackwell"): KernelSpeed(compute=3.0, memory=0.95),
    ("mxfp4", "hopper"): KernelSpeed(compute=0.8, memory=0.85),
    ("mxfp4", "ada"): KernelSpeed(compute=0.8, memory=0.85),
    ("mxfp4", "ampere"): KernelSpeed(compute=0.8, memory=0.85),
}
_BF16 = KernelSpeed(compute=1.0, memory=1.0)


def kernel_speed(dtype: str, generation: str) -> KernelSpeed:
    """Return the kernel speed of `dtype` weights on `generation` (bf16/fp16: 1.0, 1.0)."""
    return _TABLE.get((dtype, generation), _BF16)


# Routed experts compute at their own rate: vLLM's fused-MoE kernels (grouped GEMMs with the
# tokens permuted by expert) reach a share of the dense BF16 peak per weight format, on slices as
# wide as the GPU's whole expert; thinner slices (TP) slow them by n / (n + moe_shard_knee).
# Fitted by bench/fit_moe_compute.py on aiconfigurator-core 0.12's measured vLLM 0.19-0.24 MoE
# tables (H100, H200, B200; 256 to 16,384 tokens; mean error ×1.24). fp8 is the block-scaled
# kernel of fp8 MoE checkpoints; int4 is Marlin, fitted over every token count together with its
# read share below (within 0.8-1.35× of the tables from 1 to 16,384 tokens).
_MOE_COMPUTE: dict[tuple[str, str], float] = {
    ("bf16", "hopper"): 0.82,
    ("fp8", "hopper"): 0.76,
    ("int4", "hopper"): 0.20,
    ("mxfp4", "hopper"): 0.62,
    ("bf16", "blackwell"): 0.47,
    ("fp8", "blackwell"): 0.30,
    ("int4", "blackwell"): 0.12,
    ("mxfp4", "blackwell"): 0.30,
}

# The experts' weight reads, as a share of the read rate the other formats are modelled with.
# Marlin's int4 MoE (AWQ/GPTQ checkpoints) measures about three times the modelled time from 1 to
# 512 tokens in the tables, and no serving run of an int4 MoE is held to say otherwise;
# bench/fit_moe_compute.py fits this share together with int4's compute share. The other formats'
# tables are slower than the model at decode sizes too, but their serving runs disagree
# (docs/benchmarks.md), so they keep 1.
_MOE_READ: dict[tuple[str, str], float] = {
    ("int4", "hopper"): 0.18,
    ("int4", "blackwell"): 0.14,
}


# Each MoE layer's fixed time (router, permute, launches, combine: `moe_layer_fixed_us`, fitted on
# bf16 experts on the A100/H100/H200) depends on the kernel behind the weight format. Multiples
# of it fitted by bench/fit_moe_floors.py on aiconfigurator-core 0.12's measured vLLM decode
# passes of the catalog's MoE models (1-64 sequences, TP 1-8), the expert reads held as modelled:
# Hopper's block-FP8 and MXFP4 experts pay ~10 µs a layer more than bf16, Blackwell's less.
_MOE_FIXED_SCALE: dict[tuple[str, str], float] = {
    ("bf16", "ampere"): 1.16,
    ("bf16", "hopper"): 1.08,
    ("bf16", "blackwell"): 0.56,
    ("fp8", "hopper"): 1.48,
    ("fp8", "blackwell"): 0.84,
    ("mxfp4", "hopper"): 1.40,
    ("mxfp4", "blackwell"): 0.72,
}


def _moe_key(dtype: str, generation: str) -> tuple[str, str]:
    """Return the measured tables' key of `dtype` experts (fp16 runs the bf16 kernels)."""
    return ("bf16" if dtype == "fp16" else dtype, generation)


def moe_compute_share(dtype: str, generation: str) -> float | None:
    """Return the share of the dense BF16 peak vLLM's fused-MoE kernels reach for `dtype`
    experts on `generation` (fp16 as bf16), or None where no measured table covers it."""
    return _MOE_COMPUTE.get(_moe_key(dtype, generation))


def moe_read_share(dtype: str, generation: str) -> float:
    """Return the share of the modelled expert read rate vLLM's fused-MoE kernels reach for
    `dtype` experts on `generation` (1 where the tables are not applied)."""
    return _MOE_READ.get(_moe_key(dtype, generation), 1.0)


def moe_fixed_scale(dtype: str, generation: str) -> float:
    """Return the multiple of `moe_layer_fixed_us` a MoE layer of `dtype` experts pays on
    `generation` (fp16 as bf16; 1 where no measured table covers it)."""
    return _MOE_FIXED_SCALE.get(_moe_key(dtype, generation), 1.0)
