"""The engine's output contract: frozen dataclasses with StrEnums, versioned, JSON round-trip.

`PlanResult.to_dict()` is what a saved plan stores; `PlanResult.from_dict()` reads back what any
engine version stored (`plan_result`: the upgrades from each stored version). Everything outside
the engine reads results through this type (Django code through `planner.selectors`), never
through the raw dict.

- `choices`: the closed choices (Route, Backend, ...) as StrEnums;
- `parts`: the dataclasses a result is made of (Candidate, Recommendation, Placement, ...);
- `plan_result`: PlanResult, and reading what any version stored;
- `typed`: StrEnum fields kept typed, and the plain JSON form.
"""

from planner.engine.result.choices import (
    Backend,
    Balancer,
    CandidateKind,
    Direction,
    PlacementStrategy,
    Route,
    Severity,
    Strength,
    layout_label,
)
from planner.engine.result.parts import (
    SPEED_FIELDS,
    Bundle,
    CalibrationNote,
    Candidate,
    LinkSummary,
    MemoryBreakdown,
    MemoryRules,
    ModelSummary,
    NetworkSummary,
    NodeSelection,
    Pitfall,
    Placement,
    PlacementAlternative,
    QuantizationOption,
    Recommendation,
    Signal,
    SingleBundle,
    ranked,
)
from planner.engine.result.plan_result import (
    SCHEMA_VERSION,
    PlanResult,
    ResultFormatError,
    validator,
)
from planner.engine.result.typed import TypedEnums, plain

__all__ = [
    "Backend",
    "Balancer",
    "Bundle",
    "CalibrationNote",
    "Candidate",
    "CandidateKind",
    "Direction",
    "LinkSummary",
    "MemoryBreakdown",
    "MemoryRules",
    "ModelSummary",
    "NetworkSummary",
    "NodeSelection",
    "Pitfall",
    "Placement",
    "PlacementAlternative",
    "PlacementStrategy",
    "PlanResult",
    "QuantizationOption",
    "Recommendation",
    "ResultFormatError",
    "Route",
    "SCHEMA_VERSION",
    "SPEED_FIELDS",
    "Severity",
    "Signal",
    "SingleBundle",
    "Strength",
    "TypedEnums",
    "layout_label",
    "plain",
    "ranked",
    "validator",
]
