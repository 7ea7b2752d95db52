"""Monitoring settings with their defaults; each can be overridden in Django settings.

The lead owns config/settings; these names are read with getattr so that an operator can set
them there (from the environment) without this app failing when they are absent.
"""

from __future__ import annotations

from django.conf import settings

from config.env import env
from monitoring.scrape.fetch import Allowlist, FetchPolicy

DEFAULTS: dict[str, object] = {
    # Poll intervals in seconds.
    "MONITORING_DEFAULT_POLL_INTERVAL_S": 15,
    "MONITORING_MIN_POLL_INTERVAL_S": 5,
    "MONITORING_MAX_POLL_INTERVAL_S": 3600,
    # Fetch limits.
    "MONITORING_CONNECT_TIMEOUT_S": 3.0,
    "MONITORING_TOTAL_TIMEOUT_S": 10.0,
    "MONITORING_MAX_RESPONSE_BYTES": 10 * 1024 * 1024,
    # CIDRs and host names; empty allows everything but link-local and cloud metadata.
    "MONITORING_URL_ALLOWLIST": env.list("MONITORING_URL_ALLOWLIST", default=[]),
    # Retention.
    "MONITORING_RAW_RETENTION_H": 48,
    "MONITORING_ROLLUP_RETENTION_D": 30,
    "MONITORING_RETENTION_BATCH_ROWS": 5_000,
    "MONITORING_RETENTION_MAX_BATCHES": 20,
    "MONITORING_ROLLUP_MAX_MINUTES_PER_RUN": 30,
    "MONITORING_ROLLUP_MAX_ROWS_PER_RUN": 500_000,
    # Ranges up to this many hours are answered from raw samples, longer ones from rollups.
    "MONITORING_RAW_QUERY_MAX_H": 6,
    "MONITORING_MAX_POINTS_PER_SERIES": 1000,
    # Default alert rule thresholds.
    "MONITORING_DEFAULT_TTFT_P95_THRESHOLD_S": 2.0,
    # Webhook delivery.
    "MONITORING_WEBHOOK_TIMEOUT_S": 5.0,
}


def get(name: str):
    """Return the setting `name`, or its default."""
    return getattr(settings, name, DEFAULTS[name])


def fetch_policy(*, interval_s: float | None = None) -> FetchPolicy:
    """Return the fetch limits of one poll; the total timeout stays below the poll interval."""
    total = float(get("MONITORING_TOTAL_TIMEOUT_S"))
    if interval_s:
        total = min(total, max(1.0, interval_s * 0.8))
    return FetchPolicy(
        connect_timeout_s=min(float(get("MONITORING_CONNECT_TIMEOUT_S")), total),
        total_timeout_s=total,
        max_bytes=int(get("MONITORING_MAX_RESPONSE_BYTES")),
        allowlist=Allowlist.parse(list(get("MONITORING_URL_ALLOWLIST"))),
    )
