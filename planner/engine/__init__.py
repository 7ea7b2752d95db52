"""The planner engine: pure Python, no Django. One entry: plan(spec) -> PlanResult."""

from planner.engine.plan import plan
from planner.engine.result import PlanResult
from planner.engine.spec import PlanSpec, SpecError, spec_from_dict

__all__ = ["PlanResult", "PlanSpec", "SpecError", "plan", "spec_from_dict"]
