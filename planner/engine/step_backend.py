"""What times the serving model's engine steps (see planner/engine/serving/backend.py).

Kept apart from the serving package so the spec can name it without importing the model.
"""

from __future__ import annotations

from enum import StrEnum


class StepBackend(StrEnum):
    ROOFLINE = "roofline"  # our roofline: needs nothing installed
    AICONFIGURATOR = "aiconfigurator"  # NVIDIA's measured kernel tables (optional extra)


STEP_BACKENDS = tuple(b.value for b in StepBackend)
