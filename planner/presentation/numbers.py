"""Numbers in the reader's locale: thousands separators, whole counts, units."""

from __future__ import annotations

import math

from django.utils.formats import number_format


def count(value: float) -> str:
    """Return a whole count, rounded down (42.7 sequences fit: 42 do), e.g. '1,234'."""
    return number_format(math.floor(value + 1e-9), force_grouping=True)


def amount(value: float, decimals: int = 0) -> str:
    """Return a measured amount with `decimals` places and grouping, e.g. '3,146' or '17.9'."""
    return number_format(round(value, decimals), decimal_pos=decimals, force_grouping=True)
