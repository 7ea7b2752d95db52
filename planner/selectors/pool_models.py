"""The models a saved pool plan placed, read from its typed result (monitoring links to them)."""

from __future__ import annotations

from planner.engine.pool.result import PoolResult
from planner.engine.result import ResultFormatError
from planner.models import PoolPlan


def placed_model_names(pool_plan: PoolPlan) -> list[str]:
    """Return the names of the models the pool plan placed (none for an unreadable snapshot)."""
    try:
        return [m.name for m in PoolResult.from_dict(pool_plan.result).placed]
    except ResultFormatError:
        return []
