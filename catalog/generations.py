"""A GPU's generation from its catalog slug: what decides which kernels vLLM runs on it."""

from __future__ import annotations

GENERATIONS = ("volta", "turing", "ampere", "ada", "hopper", "blackwell")
# Below compute capability 8.0: no FlashAttention 2 and no bf16; vLLM 0.8 to 0.10.1 ran these
# GPUs on its V0 engine (planner/engine/profiling.py).
PRE_AMPERE = frozenset({"volta", "turing"})


def gpu_generation(slug: str, fp8_support: bool) -> str:
    """Return the GPU generation from its catalog slug (custom GPUs: by fp8 support)."""
    s = slug.lower()
    if s.startswith(("t4", "turing", "rtx-20", "titan-rtx", "quadro-rtx")):
        return "turing"
    if s.startswith(("v100", "volta")):
        return "volta"
    if s.startswith(("b200", "b100", "gb200", "b300")):
        return "blackwell"
    if s.startswith(("h100", "h800", "h200", "h20", "gh200")):
        return "hopper"
    if s.startswith(("l40", "l20", "l4", "rtx-4090", "rtx-6000-ada")):
        return "ada"
    if s.startswith(("a100", "a800", "a10", "a6000", "rtx-3090", "a30", "a40")):
        return "ampere"
    return "hopper" if fp8_support else "ampere"


def pre_ampere(slug: str) -> bool:
    """Return whether the GPU of `slug` is below compute capability 8.0 (Volta, Turing)."""
    return gpu_generation(slug, fp8_support=False) in PRE_AMPERE
