"""Adapter between ModelSpec rows and catalog.Architecture (the planner's input)."""

from dataclasses import fields as dataclass_fields
from typing import Any

from catalog import Architecture, parameter_breakdown

# Architecture fields stored one-to-one as ModelSpec columns ("extra" stays in config_json).
ARCHITECTURE_FIELDS: tuple[str, ...] = tuple(
    f.name for f in dataclass_fields(Architecture) if f.name != "extra"
)


def architecture_values(arch: Architecture) -> dict[str, Any]:
    """Return the ModelSpec column values for `arch` (None quantization becomes '')."""
    values = {name: getattr(arch, name) for name in ARCHITECTURE_FIELDS}
    values["checkpoint_quantization"] = values["checkpoint_quantization"] or ""
    return values


def spec_to_architecture(spec: Any) -> Architecture:
    """Return the Architecture described by a ModelSpec (or any object with its fields)."""
    values = {name: getattr(spec, name) for name in ARCHITECTURE_FIELDS}
    values["checkpoint_quantization"] = values["checkpoint_quantization"] or None
    return Architecture(**values)


def parameter_counts(spec: Any) -> tuple[int, int]:
    """Return (total, active) parameter counts computed from the spec's architecture."""
    breakdown = parameter_breakdown(spec_to_architecture(spec))
    return breakdown.total, breakdown.active
