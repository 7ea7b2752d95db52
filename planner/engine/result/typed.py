"""Typed enums inside result dataclasses, and the plain JSON-able form of any result value."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from enum import StrEnum
from functools import cache
from typing import Any, get_type_hints

from planner.engine.messages import Message


def _coerce_enums(obj: Any) -> None:
    """Turn the str values the engine passes into the StrEnums the fields declare."""
    for name, enum in _enum_fields(type(obj)).items():
        value = getattr(obj, name)
        if not isinstance(value, enum):
            object.__setattr__(obj, name, enum(value))


@cache
def _enum_fields(cls: type) -> dict[str, type[StrEnum]]:
    hints = get_type_hints(cls)
    return {
        f.name: hints[f.name]
        for f in fields(cls)
        if isinstance(hints[f.name], type) and issubclass(hints[f.name], StrEnum)
    }


class TypedEnums:
    """Base of the dataclasses with StrEnum fields: engine code may pass plain strings."""

    __slots__ = ()

    def __post_init__(self) -> None:
        _coerce_enums(self)


def plain(value: Any) -> Any:
    """Return a result part as JSON-able values (messages as codes, floats to 3 decimals)."""
    if isinstance(value, Message):
        return value.to_json()
    if isinstance(value, StrEnum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: plain(getattr(value, f.name))
            for f in fields(value)
            if not f.metadata.get("internal")
        }
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 3)
    return value
