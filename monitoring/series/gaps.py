"""Where a chart breaks its line: points further apart than a few poll intervals (or time
buckets) have missed polls between them, so a null point goes between them instead of a
straight line across the outage. Shared by every store's range reads (pure: no Django)."""

from __future__ import annotations

GAP_INTERVALS = 2.5


def max_gap_ms(width_ms: float, interval_s: float | None) -> float:
    """Return the widest spacing of two points that is not a gap, for buckets of `width_ms`."""
    return GAP_INTERVALS * max(width_ms, (interval_s or 0) * 1000)


def with_gaps(
    times: list[int], values: list[float | None], *, max_gap_ms: float
) -> tuple[list[int], list[float | None]]:
    """Return the points with a null point inside every gap wider than `max_gap_ms`."""
    out_t: list[int] = []
    out_v: list[float | None] = []
    for t, v in zip(times, values, strict=True):
        if out_t and t - out_t[-1] > max_gap_ms:
            out_t.append(out_t[-1] + (t - out_t[-1]) // 2)
            out_v.append(None)
        out_t.append(t)
        out_v.append(v)
    return out_t, out_v
