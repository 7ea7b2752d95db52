"""Live windows of the embedded store, read once per poll instead of once per refresh.

A window that ends now ("the last hour") holds nothing newer than the targets' newest polls, and
the embedded store writes a poll's samples in the same transaction as the target's
`last_poll_at`: until one of the targets polls again, the same question has the same answer.
Every open dashboard asks it every 5 s and a target polls every 15 s, so two reads in three
came from the database for nothing. The answer is kept in the shared cache (Redis in
production, for every web worker) under the targets' poll times, for at most one poll interval
(and MAX_KEEP_S): a window's left edge then lags by at most that, which a chart of an hour or
more does not show. Windows that end before the newest poll (a chosen past range) are read
every time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime

from django.core.cache import cache

from monitoring.series import RangeResult, SeriesMatch, TargetRef

MAX_KEEP_S = 60


def live_key(
    targets: Sequence[TargetRef],
    series: Sequence[SeriesMatch],
    start: datetime,
    end: datetime,
    max_points: int,
) -> str | None:
    """Return the cache key of a live window of polled targets, or None when it is not one."""
    if not targets or any(t.last_poll_at is None or t.read_only for t in targets):
        return None
    polls = sorted((t.id, t.last_poll_at.timestamp()) for t in targets if t.last_poll_at)
    if end.timestamp() < max(polled_at for _, polled_at in polls):
        return None
    asked = sorted((s.key, s.labels or "", s.labels is None) for s in series)
    width_s = round((end - start).total_seconds())
    digest = hashlib.sha256(repr((polls, asked, width_s, max_points)).encode()).hexdigest()
    return f"monitoring:live-range:{digest}"


def keep_s(targets: Sequence[TargetRef]) -> int:
    """How long a live window's answer stands: the shortest poll interval, at most MAX_KEEP_S."""
    return max(1, min(MAX_KEEP_S, *(t.interval_s for t in targets)))


def cached_range(
    targets: Sequence[TargetRef],
    series: Sequence[SeriesMatch],
    start: datetime,
    end: datetime,
    max_points: int,
    read: Callable[[], RangeResult],
) -> RangeResult:
    """Return `read()`, from the shared cache when the same live window was read since the
    targets' newest polls."""
    key = live_key(targets, series, start, end, max_points)
    if key is None:
        return read()
    found = cache.get(key)
    if isinstance(found, RangeResult):
        return found
    result = read()
    cache.set(key, result, timeout=keep_s(targets))
    return result
