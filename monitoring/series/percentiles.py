"""Percentiles of a window's values, as evidence and plan vs reality read them."""

from __future__ import annotations

import math


def p95(values: list[float]) -> float:
    """Return the nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
