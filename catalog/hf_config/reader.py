"""One config dict read with its family's defaults and aliases, every wrong key named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.architecture import ArchitectureError
from catalog.hf_config.families import ALIASES, Family

# No real dimension comes near this; 1e308 would overflow float maths downstream.
MAX_CONFIG_INT = 10**9


def config_error(missing: list[str], errors: dict[str, str], label: str) -> ArchitectureError:
    if missing:
        return ArchitectureError(
            f"config.json for {label} is missing required keys: {', '.join(missing)}",
            missing=missing,
            errors={k: "required" for k in missing} | errors,
        )
    return ArchitectureError(
        "invalid config.json: " + "; ".join(f"{k}: {v}" for k, v in errors.items()),
        missing=[],
        errors=errors,
    )


class ConfigReader:
    """One config dict with its family defaults, its key prefix for errors, and aliases."""

    def __init__(self, raw: Mapping[str, Any], family: Family, prefix: str) -> None:
        self.raw = raw
        self.family = family
        self.prefix = prefix
        self.errors: dict[str, str] = {}

    def value(self, key: str, default: Any = None) -> Any:
        for name in ALIASES.get(key, (key,)):
            if self.raw.get(name) is not None:
                return self.raw[name]
        return self.family.defaults.get(key, default)

    def has(self, key: str) -> bool:
        return self.value(key) is not None

    def int(self, key: str, default: int = 0) -> int:
        """Return the key as a size: an integer in [0, MAX_CONFIG_INT] (digit strings too)."""
        value = self.value(key, default)
        if value is None:
            return default
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        integral = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not integral or not 0 <= value <= MAX_CONFIG_INT:
            self.errors[self.prefix + key] = (
                f"must be an integer between 0 and {MAX_CONFIG_INT:,} (got {value!r:.40})"
            )
            return default
        return int(value)

    def bool(self, key: str, default: bool) -> bool:
        value = self.value(key)
        return default if value is None else bool(value)
