"""How close each GPU's kernels come to its datasheet, relative to the A100 the constants fit.

The roofline's efficiencies (hbm_efficiency, decode_mfu, prefill_mfu) were fitted on A100 serving
runs. Newer GPUs do not reach the same share of their datasheet. NVIDIA's measured vLLM GEMM
tables (aiconfigurator-core 0.12 wheel, aiconfigurator_core/systems/data/<gpu>/gemm/vllm/
<version>/gemm_perf.parquet: vLLM 0.24.0 on H100/H200/B200, 0.14.0 on A100; bf16 GEMMs of
Llama-8B's layer shapes, averaged over m = 1, 8, 64 and m = 1024, 2048, 4096; vLLM 0.24.0 on
L40S) give:

| GPU  | weight streaming (share of HBM) | large GEMMs (share of dense bf16) | prompt attention |
|------|------|------|------|
| A100 | 0.68 | 0.83 | 0.56 |
| H100 | 0.79 | 0.82 | 0.64 |
| H200 | 0.74 | 0.81 | 0.63 |
| B200 | 0.65 | 0.72 | 0.51 |
| L40S | 0.79 | 0.65 | 0.51 |

Prompt attention (FlashAttention, in 16 bit whatever the weights' dtype; 32 query / 8 KV heads of
128, causal, one prompt of 8k and 16k tokens, the context-attention tables) has its own share.
The factors below are each GPU's share over the A100's (a B200 streams weights at 0.97x the
A100's share, multiplies at 0.86x and attends at 0.91x; an H100 streams at 1.16x);
`bench/kernel_efficiency.py` prints them. GPUs without tables take their generation's (Ada the
L40S's: the L4 and RTX 4090 also stream GDDR, and their datasheet TFLOPS are as far from reach).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelEfficiency:
    """Multipliers of the fitted HBM efficiency (memory), GEMM MFU (compute) and attention MFU."""

    memory: float
    compute: float
    attention: float


_A100 = KernelEfficiency(memory=1.0, compute=1.0, attention=1.0)
_BY_GPU: dict[str, KernelEfficiency] = {
    "h100": KernelEfficiency(memory=1.16, compute=0.98, attention=1.14),
    "h800": KernelEfficiency(memory=1.16, compute=0.98, attention=1.14),
    "h200": KernelEfficiency(memory=1.09, compute=0.98, attention=1.11),
    "b200": KernelEfficiency(memory=0.97, compute=0.86, attention=0.91),
    "l40s": KernelEfficiency(memory=1.17, compute=0.78, attention=0.90),
}
_BY_GENERATION: dict[str, KernelEfficiency] = {
    "hopper": _BY_GPU["h100"],
    "blackwell": _BY_GPU["b200"],
    "ada": _BY_GPU["l40s"],
}


def kernel_efficiency(slug: str, generation: str) -> KernelEfficiency:
    """Return the measured kernel efficiency of GPU `slug` relative to the A100's."""
    for prefix, eff in _BY_GPU.items():
        if slug.lower().startswith(prefix):
            return eff
    return _BY_GENERATION.get(generation, _A100)
