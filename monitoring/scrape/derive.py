"""Derived series from two raw snapshots: counter rates, ratios and histogram quantiles.

Pure functions. A pair of snapshots yields no rate at all when the elapsed time is not positive
(clock skew) or the epoch changed (restart, new Ray session); a single counter or histogram that
went backwards yields nothing for that series. Never a negative rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .series import Histogram, RawSnapshot

QUANTILES: tuple[tuple[str, float], ...] = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


def comparable(previous: RawSnapshot | None, current: RawSnapshot) -> float | None:
    """Return the elapsed seconds between two snapshots, or None when no rate can be derived."""
    if previous is None or previous.kind != current.kind:
        return None
    if previous.epoch != current.epoch:
        return None
    elapsed = current.ts - previous.ts
    if not math.isfinite(elapsed) or elapsed <= 0:
        return None
    return elapsed


def counter_delta(previous: float | None, current: float | None) -> float | None:
    """Return current - previous, or None when either is missing, not finite, or it went back."""
    if previous is None or current is None:
        return None
    if not (math.isfinite(previous) and math.isfinite(current)):
        return None
    delta = current - previous
    return delta if delta >= 0 else None


def rate(previous: float | None, current: float | None, elapsed_s: float | None) -> float | None:
    """Return the per-second rate of a counter, or None (reset, missing, no time elapsed)."""
    if elapsed_s is None or elapsed_s <= 0:
        return None
    delta = counter_delta(previous, current)
    return None if delta is None else delta / elapsed_s


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """Return numerator / denominator, or None when the denominator is not positive."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def histogram_delta(previous: Histogram | None, current: Histogram | None) -> Histogram | None:
    """Return the observations between two cumulative histograms, or None on reset/mismatch."""
    if previous is None or current is None:
        return None
    prev_by_le = dict(previous.buckets)
    buckets: list[tuple[float, float]] = []
    for le, cum in current.buckets:
        before = prev_by_le.get(le)
        if before is None:
            return None  # bucket layout changed: a different server or version
        delta = counter_delta(before, cum)
        if delta is None:
            return None
        buckets.append((le, delta))
    count = counter_delta(previous.count, current.count)
    if count is None:
        return None
    total = current.sum - previous.sum
    return Histogram(buckets=tuple(buckets), count=count, sum=total)


def histogram_quantile(q: float, hist: Histogram) -> float | None:
    """Return the q-quantile of a (delta) histogram like PromQL's histogram_quantile.

    Linear interpolation inside the bucket holding the rank; the first bucket starts at 0 (when its
    bound is positive); a rank in the +Inf bucket returns the highest finite bound. None when the
    histogram holds no observation or has no finite bucket.
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be within [0, 1], got {q}")
    buckets = _monotone(hist.buckets)
    if not buckets or not math.isinf(buckets[-1][0]):
        return None
    total = buckets[-1][1]
    if total <= 0:
        return None
    if len(buckets) < 2:
        return None
    rank = q * total
    lower_bound = 0.0
    lower_count = 0.0
    for index, (le, cum) in enumerate(buckets):
        if cum >= rank and cum > 0:
            if math.isinf(le):
                return buckets[-2][0]
            if index == 0 and le <= 0:
                return le
            in_bucket = cum - lower_count
            if in_bucket <= 0:
                return le
            value = lower_bound + (le - lower_bound) * (rank - lower_count) / in_bucket
            return min(max(value, lower_bound), le)  # no float overshoot past the bound
        lower_bound, lower_count = le, cum
    return buckets[-2][0]


def _monotone(buckets: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Return buckets sorted by bound with cumulative counts forced non-decreasing.

    Like Prometheus, tolerate small non-monotonic glitches from scrapes racing observations.
    """
    out: list[tuple[float, float]] = []
    running = 0.0
    for le, cum in sorted(buckets):
        if math.isnan(le) or math.isnan(cum):
            continue
        running = max(running, cum)
        out.append((le, running))
    return out


def quantiles(hist: Histogram | None) -> dict[str, float]:
    """Return {"p50": .., "p95": .., "p99": ..} of a delta histogram (empty when no data)."""
    if hist is None:
        return {}
    out: dict[str, float] = {}
    for name, q in QUANTILES:
        value = histogram_quantile(q, hist)
        if value is not None:
            out[name] = value
    return out


def histogram_mean(hist: Histogram | None) -> float | None:
    """Return the mean observation of a delta histogram (sum / count)."""
    if hist is None or hist.count <= 0 or not math.isfinite(hist.sum):
        return None
    return hist.sum / hist.count
