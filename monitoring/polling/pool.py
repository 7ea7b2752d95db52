"""The poll pool: suspect targets share a few worker slots, so healthy ones always find one.

A target is suspect while its polls end in expensive failures (the whole time budget spent, a
limit hit: monitoring.pacing). However many of them there are, at most
MONITORING_SUSPECT_POLL_SLOTS of their polls run at once across all workers (default 1); a
suspect poll that finds no free slot is skipped (it shows as a missed poll). With `make run`'s
two worker processes, one is therefore always free for the healthy targets.

The slots are keys in the shared cache (Redis in production, a folder under var/ locally), each
held at most for one poll's time limit, so a worker killed mid-poll frees its slot anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache

from monitoring.models import Target

_KEY = "monitoring:suspect-poll-slot:{}"


def is_suspect(target: Target) -> bool:
    return target.spacing_factor > 1


@contextmanager
def poll_slot(target: Target, *, hold_s: float) -> Iterator[bool]:
    """Yield whether `target` may be polled now (always, unless suspect and the slots are full)."""
    if not is_suspect(target):
        yield True
        return
    slots = settings.MONITORING_SUSPECT_POLL_SLOTS
    for index in range(slots):
        key = _KEY.format(index)
        if cache.add(key, target.pk, timeout=max(1, int(hold_s) + 1)):
            try:
                yield True
            finally:
                cache.delete(key)
            return
    yield False
