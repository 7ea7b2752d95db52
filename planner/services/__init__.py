"""The planner's Django-side services: resolve specs, run the engine, save and compare plans."""

from planner.presentation.compare import Comparison, compare_plans, compare_results
from planner.services.plans import (
    Evaluation,
    engine_version,
    plan_create,
    plan_evaluate,
    plan_rerun,
    plan_save,
)
from planner.services.resolve import ResolvedSpec, resolve_spec

__all__ = [
    "Comparison",
    "Evaluation",
    "ResolvedSpec",
    "compare_plans",
    "compare_results",
    "engine_version",
    "plan_create",
    "plan_evaluate",
    "plan_rerun",
    "plan_save",
    "resolve_spec",
]
