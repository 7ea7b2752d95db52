"""PlanResult, one engine run, and reading back what any version of the engine stored: each
stored schema version is upgraded step by step (`_UPGRADES`), completed and validated."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields, is_dataclass
from enum import StrEnum
from functools import cache, cached_property
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from planner.engine.assumptions import Assumptions
from planner.engine.legacy_messages import upgrade_messages
from planner.engine.messages import Code, Message, legacy
from planner.engine.result.choices import (
    Backend,
    Balancer,
    CandidateKind,
    Direction,
    PlacementStrategy,
    Route,
    Severity,
    Strength,
)
from planner.engine.result.parts import (
    SPEED_FIELDS,
    CalibrationNote,
    Candidate,
    MemoryRules,
    ModelSummary,
    NetworkSummary,
    NodeSelection,
    Pitfall,
    Placement,
    QuantizationOption,
    Recommendation,
    Signal,
)
from planner.engine.result.typed import plain

# Bump when the stored shape changes, and add the step from the previous version to _UPGRADES.
SCHEMA_VERSION = 7


@dataclass(frozen=True, kw_only=True)
class PlanResult:
    """One engine run. Not slotted, so that `best` and `applied_assumptions` are cached."""

    recommendation: Recommendation
    candidates: tuple[Candidate, ...]
    pinned: Candidate | None
    quantization_options: tuple[QuantizationOption, ...]
    signals: tuple[Signal, ...]
    placement: Placement
    configs: dict[str, Any]
    pitfalls: tuple[Pitfall, ...]
    assumptions: dict[str, Any]
    network: NetworkSummary
    model: ModelSummary
    node_selection: NodeSelection
    calibration: CalibrationNote | None = None
    memory_rules: MemoryRules | None = None
    schema_version: int = SCHEMA_VERSION

    @cached_property
    def best(self) -> Candidate | None:
        """Return the recommended candidate (None only in a legacy snapshot that lacks it)."""
        wanted = self.recommendation.candidate_id
        return next(
            (c for c in (*self.candidates, *filter(None, [self.pinned])) if c.id == wanted), None
        )

    @cached_property
    def applied_assumptions(self) -> Assumptions:
        """Return the constants the plan was computed with, typed.

        `assumptions` keeps what was stored (an older engine's constants included, for the
        record); this keeps the constants the current engine knows, defaults for any newer one.
        """
        known = {f.name for f in fields(Assumptions)}
        return Assumptions(**{k: v for k, v in self.assumptions.items() if k in known})

    @property
    def hosts(self) -> tuple[str, ...]:
        """Return the machines the recommendation uses."""
        if self.node_selection.hosts:
            return self.node_selection.hosts
        return self.best.host_names if self.best else ()

    def to_dict(self) -> dict[str, Any]:
        """Return the whole result as a JSON-able dict (numbers rounded to 3 decimals)."""
        out: dict[str, Any] = plain(self)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanResult:
        """Return the result a saved plan stored, whatever engine version stored it.

        Raise ResultFormatError naming the field when the data cannot be read.
        """
        return _read(_upgrade(data))


class ResultFormatError(ValueError):
    """A stored result that no version of the contract describes."""


# --- reading stored results -------------------------------------------------------------------


def _upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1: results stored before the contract was versioned (engine 1.0.x).

    The engine's first release did not compute `pp_comm_per_decode_step_ms` (0: no pipeline
    hop was counted), and snapshots were stored without validation (hand-made ones lacked whole
    sections), so every absent field is completed with its empty value: 0, "", False, nothing.
    Readers show what is there.
    """
    out = dict(data)
    out["candidates"] = [
        {"pp_comm_per_decode_step_ms": 0.0, **c} if isinstance(c, Mapping) else c
        for c in out.get("candidates") or []
    ]
    return _complete(PlanResult, out)


def _upgrade_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 → 3 (issue 13): memory breakdowns gain kv_groups and blocks_per_request, the
    result gains memory_rules. Plans stored before knew neither: 1 group, 0 blocks (unknown),
    no rules named.
    """
    return _complete(PlanResult, data)


def _upgrade_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 → 4 (issue 12): serving predictions name what timed their steps
    (step_backend, step_backend_note). Every plan stored before was timed by the roofline.
    """
    return _complete(PlanResult, data)


def _upgrade_v4(data: dict[str, Any]) -> dict[str, Any]:
    """Version 4 → 5 (issue 18): messages are codes with typed parameters, no English
    (planner/engine/legacy_messages.py reads the English of earlier versions back)."""
    return upgrade_messages(data)


def _upgrade_v5(data: dict[str, Any]) -> dict[str, Any]:
    """Version 5 → 6 (issue 12): serving predictions say which calibration runs their band
    comes from (band_runs, band_regime). A plan stored before has none: 0 runs, no regime (the
    page then names the published runs in general)."""
    return _complete(PlanResult, data)


def _without_phantom_speeds(cand: Any) -> Any:
    """Return a stored candidate whose memory did not fit with its speeds None (not ~1e14 ms)."""
    if not isinstance(cand, Mapping) or cand.get("fits", True):
        return cand
    reason = cand.get("rejected_reason")
    if isinstance(reason, Mapping) and reason.get("code") == Code.REJECT_ROOM.value:
        return cand  # it fits, there was no room: what it would deliver once placed stays
    return {**cand, **dict.fromkeys(SPEED_FIELDS)}


def _upgrade_v6(data: dict[str, Any]) -> dict[str, Any]:
    """Version 6 → 7 (issue 32): a layout whose memory does not fit has no speed figures
    (None instead of TTFT ~1e14 ms and 0 tok/s), and serving predictions say when measured
    kernel tables timed none or only some of the steps (step_backend_notice; none before)."""
    out = dict(data)
    out["candidates"] = [_without_phantom_speeds(c) for c in out.get("candidates") or []]
    if out.get("pinned") is not None:
        out["pinned"] = _without_phantom_speeds(out["pinned"])
    return _complete(PlanResult, out)


_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _upgrade_v1,
    2: _upgrade_v2,
    3: _upgrade_v3,
    4: _upgrade_v4,
    5: _upgrade_v5,
    6: _upgrade_v6,
}


def _upgrade(data: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise ResultFormatError(f"a stored result is an object, not {type(data).__name__}")
    out = dict(data)
    version = out.get("schema_version", 1)
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise ResultFormatError(f"schema_version {version!r} is not one this engine reads")
    while version < SCHEMA_VERSION:
        out = _UPGRADES[version](out)
        version += 1
    out["schema_version"] = SCHEMA_VERSION
    return out


# Enum values for legacy snapshots that omitted them: the least committal member.
_LEGACY_ENUM_DEFAULTS: dict[type[StrEnum], StrEnum] = {
    Route: Route.NONE,
    Backend: Backend.MP,
    Balancer: Balancer.NONE,
    CandidateKind: CandidateKind.INTRA_NODE,
    Severity: Severity.INFO,
    Direction: Direction.AGAINST_RAY,
    Strength: Strength.LOW,
    PlacementStrategy: PlacementStrategy.STRICT_SPREAD,
}


def _empty(tp: Any) -> Any:
    """Return the empty value of a field type (for completing legacy snapshots)."""
    origin = get_origin(tp)
    if origin in (Union, UnionType) and NoneType in get_args(tp):
        return None
    if tp is Message:
        return legacy("").to_json()
    if is_dataclass(tp) and isinstance(tp, type):
        return _complete(tp, {})
    if isinstance(tp, type) and issubclass(tp, StrEnum):
        return _LEGACY_ENUM_DEFAULTS[tp].value
    if origin is tuple or tp is tuple:
        return []
    if origin is dict or tp is dict:
        return {}
    return {str: "", int: 0, float: 0.0, bool: False}.get(tp)


def _complete(cls: type, data: Any) -> Any:
    """Return `data` with every field of dataclass `cls` present, recursively."""
    if not isinstance(data, Mapping):
        return data
    hints = get_type_hints(cls)
    out = dict(data)
    for f in fields(cls):
        tp = hints[f.name]
        if f.name not in out:
            if f.default is not MISSING:
                out[f.name] = f.default
            elif f.default_factory is not MISSING:
                out[f.name] = f.default_factory()
            else:
                out[f.name] = _empty(tp)
            continue
        out[f.name] = _complete_value(tp, out[f.name])
    return out


def _complete_value(tp: Any, value: Any) -> Any:
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, UnionType):
        inner = [a for a in args if a is not NoneType]
        return None if value is None else _complete_value(inner[0], value)
    if tp is Message:
        return value  # a leaf: a message is upgraded as a whole (_upgrade_v3)
    if is_dataclass(tp) and isinstance(tp, type):
        return _complete(tp, value)
    if origin is tuple and args and isinstance(value, list | tuple):
        return [_complete_value(args[0], v) for v in value]
    return value


@cache
def validator() -> Any:
    """The plan result's pydantic validator (built once per process, early by core.warmup)."""
    # pydantic validates the dataclasses in place (types, StrEnums, nesting) and names the
    # field that is wrong; imported late so that the engine's own import stays light.
    from pydantic import TypeAdapter

    return TypeAdapter(PlanResult)


def _read(data: dict[str, Any]) -> PlanResult:
    from pydantic import ValidationError

    try:
        result: PlanResult = validator().validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ResultFormatError(f"{where}: {first['msg']}") from exc
    return result
