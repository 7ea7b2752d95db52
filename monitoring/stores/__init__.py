"""The series store in use (setting MONITORING_SERIES_STORE), and targets as the store sees them.

`current()` is the one way in: callers never branch on the backend.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from monitoring.series import TargetRef
from monitoring.series.buffer import RetryBuffer
from monitoring.series.readonly.reader import ReadOnlyReader
from monitoring.stores.embedded import EmbeddedStore
from monitoring.stores.prometheus import PrometheusStore
from monitoring.stores.routing import RoutingStore
from monitoring.stores.spool import DatabaseSpool

EMBEDDED = "embedded"
PROMETHEUS = "prometheus"
BACKENDS = (EMBEDDED, PROMETHEUS)

_cache: dict[tuple[Any, ...], RoutingStore] = {}


def _settings_key() -> tuple[Any, ...]:
    return (
        settings.MONITORING_SERIES_STORE,
        settings.MONITORING_PROMETHEUS_URL,
        settings.MONITORING_REMOTE_WRITE_URL,
        int(settings.MONITORING_REMOTE_WRITE_BUFFER_SAMPLES),
        float(settings.MONITORING_PROMETHEUS_TIMEOUT_S),
        int(settings.MONITORING_READONLY_RATE_WINDOW_MAX_S),
    )


def current() -> RoutingStore:
    """Return the configured store (one per process and settings: it may hold a buffer)."""
    key = _settings_key()
    store = _cache.get(key)
    if store is None:
        store = _cache[key] = _build(*key)
    return store


def read_only() -> ReadOnlyReader:
    """Return the reader of read-only targets (StoreUnavailable when no Prometheus is set)."""
    return current().read_only()


def prometheus_urls(query_url: str, write_url: str) -> tuple[str, str]:
    """Return the (query, remote write) URLs, checked: http(s) with a host, no credentials."""
    query_url = query_url.strip().rstrip("/")
    write_url = write_url.strip() or (query_url + "/api/v1/write" if query_url else "")
    for name, url in (
        ("MONITORING_PROMETHEUS_URL", query_url),
        ("MONITORING_REMOTE_WRITE_URL", write_url),
    ):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.username:
            raise ImproperlyConfigured(
                f"{name}: {url!r} is not an http(s) URL of a Prometheus-compatible server"
                " (e.g. http://127.0.0.1:9090)."
            )
    return query_url, write_url


def reset() -> None:
    """Forget the stores built so far (their buffers too): the next current() builds anew."""
    _cache.clear()


def _build(
    name: str,
    query_url: str,
    write_url: str,
    buffer_samples: int,
    timeout_s: float,
    rate_window_max_s: int,
) -> RoutingStore:
    """Return the configured backend behind the router that sends read-only targets to the
    Prometheus at MONITORING_PROMETHEUS_URL (when one is set)."""
    server = None
    if query_url or name == PROMETHEUS:
        query_url, write_url = prometheus_urls(query_url, write_url)
        server = PrometheusStore(
            query_url=query_url,
            write_url=write_url,
            buffer=RetryBuffer(max_samples=buffer_samples, spool=DatabaseSpool()),
            timeout_s=timeout_s,
        )
    read_only = ReadOnlyReader(server, rate_window_max_s=rate_window_max_s) if server else None
    if name == EMBEDDED:
        return RoutingStore(EmbeddedStore(), read_only)
    if name == PROMETHEUS:
        return RoutingStore(server, read_only)
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
        selector=target.selector,
        last_success_at=target.last_success_at,
        last_poll_at=target.last_poll_at,
    )


# The Target fields `ref` reads (querysets load only these: never the encrypted token).
REF_FIELDS = (
    "pk",
    "name",
    "kind",
    "poll_interval_s",
    "selector",
    "last_success_at",
    "last_poll_at",
)


def refs(targets: Iterable[Any]) -> list[TargetRef]:
    """Return the refs of targets (a Target queryset is narrowed to REF_FIELDS)."""
    only = getattr(targets, "only", None)
    return [ref(t) for t in (only(*REF_FIELDS) if only else targets)]
