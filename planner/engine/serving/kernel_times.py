"""What a measured kernel table gives the serving model: one micro-batch's shape and its times.

The value types the step backends (planner.engine.serving.backend) and their adapters (such as
planner.engine.serving.aiconfigurator) share, below both of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


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
