"""A GPU's generation from its catalog slug: what decides which kernels vLLM runs on it."""

from __future__ import annotations

GENERATIONS = ("ampere", "ada", "hopper", "blackwell")


def gpu_generation(slug: str, fp8_support: bool) -> str:
    """Return the GPU generation from its catalog slug (custom GPUs: by fp8 support)."""
    s = slug.lower()
    if s.startswith(("b200", "b100", "gb200", "b300")):
        return "blackwell"
    if s.startswith(("h100", "h800", "h200", "h20", "gh200")):
        return "hopper"
    if s.startswith(("l40", "l20", "l4", "rtx-4090", "rtx-6000-ada")):
        return "ada"
    if s.startswith(("a100", "a800", "a10", "a6000", "rtx-3090", "a30", "a40")):
        return "ampere"
    return "hopper" if fp8_support else "ampere"
