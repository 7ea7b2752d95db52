"""A reader of plain input that collects every field error instead of stopping at the first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Reader:
    """Collect every field error instead of stopping at the first."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def get(self, d: Mapping[str, Any], key: str, path: str, default: Any = None) -> Any:
        return d.get(key, default) if isinstance(d, Mapping) else default

    def integer(
        self, d: Mapping[str, Any], key: str, path: str, lo: int, hi: int, default: int | None
    ) -> int | None:
        value = d.get(key, default)
        if value is None:
            if default is None and key in d:
                return None
            if default is None:
                return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            self.errors[path] = f"must be an integer between {lo} and {hi}"
            return default
        if not lo <= int(value) <= hi:
            self.errors[path] = f"must be between {lo} and {hi}, got {value}"
            return default
        return int(value)

    def number(
        self,
        d: Mapping[str, Any],
        key: str,
        path: str,
        *,
        gt: float,
        le: float,
        default: float | None,
    ) -> float | None:
        value = d.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.errors[path] = f"must be a number in ({gt}, {le}]"
            return default
        if not gt < float(value) <= le:
            self.errors[path] = f"must be in ({gt}, {le}], got {value}"
            return default
        return float(value)

    def choice(
        self, d: Mapping[str, Any], key: str, path: str, choices: tuple[str, ...], default: str
    ) -> str:
        value = d.get(key, default)
        if value not in choices:
            self.errors[path] = f"must be one of {', '.join(choices)}, got {value!r}"
            return default
        return str(value)

    def boolean(self, d: Mapping[str, Any], key: str, path: str, default: bool = False) -> bool:
        value = d.get(key, default)
        if not isinstance(value, bool):
            self.errors[path] = "must be true or false"
            return default
        return value

    def mapping(self, d: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
        value = d.get(key, {})
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.errors[path] = "must be an object"
            return {}
        return value
