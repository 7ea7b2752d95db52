"""What every user's overview shows alike, computed once per few seconds for all of them.

Every open overview refreshes its tiles, its totals and the fleet charts every 5 s, and they
are the same for everyone who reads the same language. One computation per
MONITORING_FLEET_SERIES_CACHE_S seconds serves every web worker through the shared cache
(Redis in production), instead of one per tab: 15 open overviews cost what one does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils.translation import get_language


def shared[T](name: str, compute: Callable[[], T], *params: Any) -> T:
    """Return `compute()` as cached for `name`, the active language and `params`."""
    digest = hashlib.sha256(repr(params).encode()).hexdigest()
    key = f"monitoring:{name}:{get_language()}:{digest}"
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, timeout=settings.MONITORING_FLEET_SERIES_CACHE_S)
    return value
