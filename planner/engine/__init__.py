"""The planner engine: pure Python, no Django. One entry: plan(spec) -> PlanResult."""

from planner.engine.plan import plan
from planner.engine.result import PlanResult
from planner.engine.spec import PlanSpec, SpecError, spec_from_dict

# Bump on any change of the arithmetic or the judgement; saved plans record it (with a digest
# of the source, so that a forgotten bump still shows the plan came from different code).
ENGINE_VERSION = "1.0.0"

__all__ = ["ENGINE_VERSION", "PlanResult", "PlanSpec", "SpecError", "plan", "spec_from_dict"]
