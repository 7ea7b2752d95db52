"""How vLLM stores MXFP4 MoE experts: padded to the shapes its kernel on the GPU needs.

vLLM (model_executor/layers/quantization/mxfp4.py, since 0.10.1) picks an MXFP4 MoE kernel by
GPU and pads each expert's gate/up (w13: 2·I rows × H) and down (w2: H rows × I) matrices,
I being the intermediate size per TP shard and H the hidden size, at creation:

- Marlin (Ampere and Ada, which have no FP4 tensor cores; Hopper before 0.11, whose wheels
  came without the triton_kernels package): I to a multiple of 128, H to 256.
- Triton (Hopper from 0.11): I to 64 at creation, then triton_kernels' Hopper MX layout
  swizzles each matrix: its contraction axis, packed two values a byte, to 64 bytes (128
  values) and the other axis to 256.
- FlashInfer (Blackwell): I and H to 256.
- ROCm: I and H to 128.

Checked against start-up logs ("Model loading took ..."): gpt-oss-120b on one H100 with
Triton in 0.14.1, 64.38 GiB logged (vLLM issue 33155), and with Marlin in 0.10.1, 65.97 GiB
(issue 23278). Where 0.10 became 0.14 on Hopper is an assumption: 0.11.0, the first release
whose logs we found say "Using Triton backend". Scales (a byte per 32 values) are padded with
their matrix.
"""

from __future__ import annotations

import math
from enum import StrEnum

from catalog.data import GpuVendor
from catalog.generations import gpu_generation

TRITON_ON_HOPPER_SINCE = (0, 11, 0)


class Mxfp4Kernel(StrEnum):
    MARLIN = "marlin"
    TRITON = "triton"
    FLASHINFER = "flashinfer"
    ROCM = "rocm"


def mxfp4_kernel(
    gpu_slug: str,
    vendor: GpuVendor = GpuVendor.NVIDIA,
    version: tuple[int, int, int] = TRITON_ON_HOPPER_SINCE,
) -> Mxfp4Kernel:
    """Return the MXFP4 MoE kernel vLLM `version` runs on this GPU by default."""
    if vendor == GpuVendor.AMD:
        return Mxfp4Kernel.ROCM
    generation = gpu_generation(gpu_slug, fp8_support=False)
    if generation == "blackwell":
        return Mxfp4Kernel.FLASHINFER
    if generation == "hopper" and version >= TRITON_ON_HOPPER_SINCE:
        return Mxfp4Kernel.TRITON
    return Mxfp4Kernel.MARLIN


def _up(n: float, multiple: int) -> int:
    return math.ceil(n / multiple) * multiple


def expert_storage_factor(hidden: int, inter_per_gpu: float, kernel: Mxfp4Kernel) -> float:
    """Return the bytes one expert's w13 and w2 take on a GPU over their unpadded bytes."""
    h, i = hidden, inter_per_gpu
    if kernel is Mxfp4Kernel.MARLIN:
        w13 = 2 * _up(i, 128) * _up(h, 256)
        w2 = _up(h, 256) * _up(i, 128)
    elif kernel is Mxfp4Kernel.TRITON:
        i = _up(i, 64)
        w13 = _up(2 * i, 256) * _up(h, 128)  # contraction over H
        w2 = _up(h, 256) * _up(i, 128)  # contraction over I
    else:
        multiple = 256 if kernel is Mxfp4Kernel.FLASHINFER else 128
        w13 = 2 * _up(i, multiple) * _up(h, multiple)
        w2 = _up(h, multiple) * _up(i, multiple)
    return (w13 + w2) / (3 * h * inter_per_gpu)
