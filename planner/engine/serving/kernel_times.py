"""What a measured kernel table gives the serving model: one micro-batch's shape and its times.

The value types the step backends (planner.engine.serving.backend) and their adapters (such as
planner.engine.serving.aiconfigurator) share, below both of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


class BackendUnavailable(RuntimeError):
    """The requested backend cannot time this layout (not installed, GPU or model not covered)."""


class KernelTableMiss(RuntimeError):
    """The tables cannot time one step (a shape they refuse); that step keeps the roofline."""


@dataclass(slots=True)
class FallbackLog:
    """The steps of one replica's tables that fell back to the roofline, and the first why."""

    steps: int = 0
    reason: str = ""

    def record(self, reason: str) -> None:
        self.steps += 1
        self.reason = self.reason or reason


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
    # Steps the tables refused and the roofline timed instead (step.py records them).
    fallbacks: FallbackLog = field(default_factory=FallbackLog, compare=False)
