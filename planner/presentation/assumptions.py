"""The assumptions table: every constant the estimate used, with its unit and what changing it
does (instead of a Python dict)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from django.utils.translation import gettext_lazy as _

from planner.engine.assumptions import Assumptions
from planner.presentation.numbers import amount, count

# Assumptions lists its constants memory first, then network, then speed; the first constant
# of each later group marks where it starts.
_GROUP_STARTS = (("nvlink_efficiency", "network"), ("hbm_efficiency", "speed"))
_EFFECTS: dict[str, Any] = {
    "memory": _(
        "Memory per GPU: changes what is left for the KV cache, so how many sequences fit."
    ),
    "network": _("Communication: changes the time spent exchanging activations per decoding step."),
    "speed": _("Speed: changes the estimated tokens per second and the latencies."),
}
_UNITS = (
    ("_gib", "GiB"),
    ("_ms", "ms"),
    ("_us", "µs"),
    ("_gbs", "GB/s"),
    ("_tokens", _("tokens")),
    ("_bytes", _("bytes")),
    ("_efficiency", _("share of peak (0–1)")),
    ("_mfu", _("share of peak (0–1)")),
    ("_share", _("share (0–1)")),
    ("_factor", "×"),
    ("_speedup", "×"),
    ("_copies", "×"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class AssumptionRow:
    name: str
    value: str
    unit: str
    effect: str


# A constant left unset (None) lets the engine follow the vLLM version's own behaviour.
_NOT_SET = _("not set: as the vLLM version does")


def _is_yes_no(name: str, value: Any) -> bool:
    """Return whether the constant is a yes/no switch, also when it is left unset."""
    if isinstance(value, bool):
        return True
    declared = {f.name: str(f.type) for f in fields(Assumptions)}.get(name, "")
    return value is None and declared.startswith("bool")


def _unit(name: str, value: Any) -> str:
    if _is_yes_no(name, value):
        return str(_("yes/no"))
    for suffix, unit in _UNITS:
        if name.endswith(suffix) or f"{suffix}_" in name:
            return str(unit)
    return ""


def _value(value: Any) -> str:
    """Return a constant in the reader's locale: counts grouped, amounts with their decimals."""
    if value is None:
        return str(_NOT_SET)
    if isinstance(value, bool):
        return str(_("yes")) if value else str(_("no"))
    if isinstance(value, int):
        return count(value)
    if isinstance(value, float):
        return amount(value, next((d for d in range(6) if round(value, d) == value), 6))
    return str(value)


def _groups() -> dict[str, str]:
    """Return each current constant's group, from the engine's own order of Assumptions."""
    starts = dict(_GROUP_STARTS)
    group, out = "memory", {}
    for f in fields(Assumptions):
        group = starts.get(f.name, group)
        out[f.name] = group
    return out


def assumption_rows(assumptions: Mapping[str, Any]) -> list[AssumptionRow]:
    """Return one row per constant, in the engine's order (stored JSON keeps no order);
    constants of older engine versions come last, without an effect."""
    groups = _groups()
    order = list(groups)
    names = sorted(
        assumptions, key=lambda n: (n not in groups, order.index(n) if n in groups else 0, n)
    )
    return [
        AssumptionRow(
            name=name,
            value=_value(assumptions[name]),
            unit=_unit(name, assumptions[name]),
            effect=str(_EFFECTS[groups[name]]) if name in groups and name != "vllm_version" else "",
        )
        for name in names
    ]
