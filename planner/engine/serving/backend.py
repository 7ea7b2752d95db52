"""Where a step's GPU time comes from: our roofline, or measured kernel tables.

The scheduler simulation (arrivals, queueing, chunked prefill, preemption) is ours whatever the
backend; a backend only answers "how long does the GPU take for this batch". The roofline is the
default and needs nothing installed. `aiconfigurator` reads NVIDIA's measured GEMM, attention,
communication and MoE tables for vLLM (the optional `aiconfigurator` extra); it covers the GPUs
and model families those tables were measured for, and a layout outside them keeps the roofline
with the reason recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planner.engine.serving import aiconfigurator
from planner.engine.serving.kernel_times import (
    BackendUnavailable,
    FallbackLog,
    KernelTableMiss,
    KernelTimes,
    StepShape,
)
from planner.engine.step_backend import STEP_BACKENDS, StepBackend

__all__ = [
    "STEP_BACKENDS",
    "BackendChoice",
    "BackendUnavailable",
    "FallbackLog",
    "KernelTableMiss",
    "KernelTimes",
    "ROOFLINE_CHOICE",
    "StepBackend",
    "StepShape",
    "resolve_kernels",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class BackendChoice:
    """What timed a layout's steps, and why the roofline was kept when it was asked otherwise."""

    requested: StepBackend = StepBackend.ROOFLINE
    used: StepBackend = StepBackend.ROOFLINE
    note: str = ""


ROOFLINE_CHOICE = BackendChoice()


def resolve_kernels(
    requested: StepBackend,
    *,
    hf_config: Mapping[str, Any] | None,
    gpu_slug: str,
    tp: int,
    dtype: str,
    kv_cache_dtype: str,
    tp_link_kind: str,
) -> tuple[KernelTimes | None, BackendChoice]:
    """Return the kernel times `requested` gives this replica (None: roofline) and the choice.

    A layout the requested tables do not cover keeps the roofline; the choice says why.
    """
    if requested is StepBackend.ROOFLINE:
        return None, ROOFLINE_CHOICE
    try:
        times = aiconfigurator.kernel_times(
            hf_config=hf_config,
            gpu_slug=gpu_slug,
            tp=tp,
            dtype=dtype,
            kv_cache_dtype=kv_cache_dtype,
            nvlink_tp=tp_link_kind == "nvlink",
        )
    except BackendUnavailable as exc:
        return None, BackendChoice(requested=requested, note=str(exc))
    return times, BackendChoice(requested=requested, used=requested, note=times.source)
