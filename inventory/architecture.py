"""Adapter between ModelSpec rows and catalog.Architecture (the planner's input)."""

from dataclasses import fields as dataclass_fields
from dataclasses import replace
from typing import Any

from catalog import Architecture, ArchitectureError, from_hf_config, parameter_breakdown
from catalog.architecture import CONFIG_ONLY_FIELDS

# Architecture fields stored one-to-one as ModelSpec columns. The rest of the Architecture
# (per-layer attention windows, MLP shape, vision tower, the checkpoint's per-module
# quantization) is read from the stored config.json each time.
ARCHITECTURE_FIELDS: tuple[str, ...] = tuple(
    f.name for f in dataclass_fields(Architecture) if f.name not in CONFIG_ONLY_FIELDS
)


def architecture_values(arch: Architecture) -> dict[str, Any]:
    """Return the ModelSpec column values for `arch` (None quantization becomes '')."""
    values = {name: getattr(arch, name) for name in ARCHITECTURE_FIELDS}
    values["checkpoint_quantization"] = values["checkpoint_quantization"] or ""
    return values


def _from_config(config: Any) -> Architecture | None:
    if not isinstance(config, dict) or not config:
        return None
    try:
        return from_hf_config(config)
    except ArchitectureError:
        return None


def spec_to_architecture(spec: Any) -> Architecture:
    """Return the Architecture described by a ModelSpec (or any object with its fields).

    The stored config.json supplies what has no column; the columns, which a user may have
    edited, win over it.
    """
    values = {name: getattr(spec, name) for name in ARCHITECTURE_FIELDS}
    values["checkpoint_quantization"] = values["checkpoint_quantization"] or None
    base = _from_config(getattr(spec, "config_json", None))
    if base is None:
        return Architecture(**values)
    if values["num_layers"] != base.num_layers:
        # Per-layer facts of the file no longer line up with the edited layer count.
        base = replace(base, layer_windows=(), quantization=None)
    return replace(base, **values)


def parameter_counts(spec: Any) -> tuple[int, int]:
    """Return (total, active) parameter counts computed from the spec's architecture."""
    breakdown = parameter_breakdown(spec_to_architecture(spec))
    return breakdown.total, breakdown.active
