"""Where a step's GPU time comes from: our roofline, or measured kernel tables.

The scheduler simulation (arrivals, queueing, chunked prefill, preemption) is ours whatever the
backend; a backend only answers "how long does the GPU take for this batch". The roofline is the
default and needs nothing installed. `aiconfigurator` reads NVIDIA's measured GEMM, attention,
communication and MoE tables for vLLM (the optional `aiconfigurator` extra); it covers the GPUs
and model families those tables were measured for, and a layout outside them keeps the roofline
with the reason recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from planner.engine.step_backend import STEP_BACKENDS, StepBackend

__all__ = [
    "STEP_BACKENDS",
    "BackendChoice",
    "BackendUnavailable",
    "KernelTimes",
    "ROOFLINE_CHOICE",
    "StepBackend",
    "StepShape",
    "resolve_kernels",
]


class BackendUnavailable(RuntimeError):
    """The requested backend cannot time this layout (not installed, GPU or model not covered)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StepShape:
    """One micro-batch as a kernel table sees it (per pipeline stage's share of the batch)."""

    decode_seqs: float
    decode_context: float  # mean KV tokens one decode query attends to
    prefill_tokens: float
    prefill_pairs: float  # query × key pairs of the prefill chunks


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelTimes:
    """Measured whole-model forward passes of one replica, replacing the roofline's stage time."""

    # (compute and attention ms, TP all-reduce ms) of one forward pass of a micro-batch.
    forward_ms: Callable[[StepShape], tuple[float, float]]
    # True when the tables' all-reduce times apply (measured over this replica's kind of link);
    # otherwise the link model times the all-reduces.
    owns_all_reduce: bool
    source: str


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
    from planner.engine.serving import aiconfigurator

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
