"""Reads of saved plans for every other part of ServePlan (views, API, decisions, monitoring).

Nothing outside the planner reads `Plan.result` itself: it asks these selectors, which return
the typed `PlanResult` contract (planner/engine/result.py) whatever engine version saved it, or
typed values derived from it (plan_values for monitoring).
"""

from planner.selectors.plans import plan_best_candidate, plan_get, plan_result, pool_plan_get

__all__ = ["plan_best_candidate", "plan_get", "plan_result", "pool_plan_get"]
