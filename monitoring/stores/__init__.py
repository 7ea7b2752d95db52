"""The series store in use (setting MONITORING_SERIES_STORE), and targets as the store sees them.

`current()` is the one way in: callers never branch on the backend.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from monitoring.series import SeriesStore, TargetRef

EMBEDDED = "embedded"
BACKENDS = (EMBEDDED,)

_cache: dict[tuple[Any, ...], SeriesStore] = {}


def _settings_key() -> tuple[Any, ...]:
    return (settings.MONITORING_SERIES_STORE,)


def current() -> SeriesStore:
    """Return the configured store (one per process and settings: it may hold a buffer)."""
    key = _settings_key()
    store = _cache.get(key)
    if store is None:
        store = _cache[key] = _build(*key)
    return store


def _build(name: str) -> SeriesStore:
    if name == EMBEDDED:
        from monitoring.stores.embedded import EmbeddedStore

        return EmbeddedStore()
    raise ImproperlyConfigured(
        f"MONITORING_SERIES_STORE: {name!r} is not a series store (one of {', '.join(BACKENDS)})."
    )


def ref(target: Any) -> TargetRef:
    """Return what a store needs of a monitoring Target."""
    return TargetRef(
        id=target.pk,
        name=target.name,
        kind=target.kind,
        interval_s=target.poll_interval_s,
        last_success_at=target.last_success_at,
    )


# The Target fields `ref` reads (querysets load only these: never the encrypted token).
REF_FIELDS = ("pk", "name", "kind", "poll_interval_s", "last_success_at")


def refs(targets: Iterable[Any]) -> list[TargetRef]:
    """Return the refs of targets (a Target queryset is narrowed to REF_FIELDS)."""
    only = getattr(targets, "only", None)
    return [ref(t) for t in (only(*REF_FIELDS) if only else targets)]
