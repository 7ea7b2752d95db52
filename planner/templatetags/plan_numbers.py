"""Template filters for numbers in the reader's locale (planner.presentation.numbers)."""

from __future__ import annotations

from typing import Any

from django import template

from planner.presentation.numbers import amount as _amount
from planner.presentation.numbers import count as _count

register = template.Library()


def _number(value: Any) -> float | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@register.filter
def count(value: Any) -> str:
    """Return a whole count with thousands separators ("—" when there is none)."""
    number = _number(value)
    return "—" if number is None else _count(number)


@register.filter
def amount(value: Any, decimals: int = 0) -> str:
    """Return a measured amount with `decimals` places and thousands separators."""
    number = _number(value)
    return "—" if number is None else _amount(number, int(decimals))


@register.filter
def seconds(value_ms: Any, decimals: int = 1) -> str:
    """Return milliseconds as seconds with `decimals` places."""
    number = _number(value_ms)
    return "—" if number is None else _amount(number / 1000, int(decimals))


@register.filter
def figure(value: Any) -> Any:
    """Return a compared figure: counts grouped, amounts with the decimals they have (at most 3,
    as saved plans store them), anything else as it is."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return _count(value)
    if isinstance(value, float):
        decimals = next((d for d in range(3) if round(value, d) == round(value, 3)), 3)
        return _amount(value, decimals)
    return value


@register.filter
def serving_bands(prediction: Any, gpu: str = "") -> Any:
    """Return a serving prediction's bands in percent and their source (planner.presentation);
    `gpu`, the layout's GPU slug, is named in the source."""
    from planner.presentation.bands import bands

    return bands(prediction, gpu)
