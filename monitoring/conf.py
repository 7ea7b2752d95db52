"""Monitoring settings with their defaults; each can be overridden in Django settings.

The lead owns config/settings; these names are read with getattr so that an operator can set
them there (from the environment) without this app failing when they are absent.
"""

from __future__ import annotations

from django.conf import settings

from config.env import env
from monitoring.scrape.fetch import Allowlist, FetchPolicy
from monitoring.scrape.limits import ScrapeLimits

DEFAULTS: dict[str, object] = {
    # Poll intervals in seconds.
    "MONITORING_DEFAULT_POLL_INTERVAL_S": 15,
    "MONITORING_MIN_POLL_INTERVAL_S": 5,
    "MONITORING_MAX_POLL_INTERVAL_S": 3600,
    # Fetch limits.
    "MONITORING_CONNECT_TIMEOUT_S": 3.0,
    "MONITORING_TOTAL_TIMEOUT_S": 10.0,
    "MONITORING_MAX_RESPONSE_BYTES": 10 * 1024 * 1024,
    # CIDRs and host names reachable besides the inventory's machines and the admin's allowlist
    # (monitoring.reach); cloud metadata addresses are refused whatever is listed.
    "MONITORING_URL_ALLOWLIST": env.list("MONITORING_URL_ALLOWLIST", default=[]),
    # Loopback reachable: local and test settings only (the simulator listens there).
    "MONITORING_ALLOW_LOOPBACK": False,
    # Per-target scrape limits (Prometheus' names; 0 switches one off) and discovery's cap.
    "MONITORING_SAMPLE_LIMIT": 50_000,
    "MONITORING_LABEL_LIMIT": 64,
    "MONITORING_LABEL_NAME_LENGTH_LIMIT": 256,
    "MONITORING_LABEL_VALUE_LENGTH_LIMIT": 2048,
    "MONITORING_MAX_EXPORTERS": 64,
    # The series store: "embedded" or "prometheus" (monitoring.stores).
    "MONITORING_SERIES_STORE": "embedded",
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
    # Polls of suspect targets (hung, over limits) running at once, across all workers.
    "MONITORING_SUSPECT_POLL_SLOTS": 1,
    # /healthz says "degraded" when the most overdue target waits longer than this.
    "MONITORING_LAG_DEGRADED_S": 60.0,
    # Webhook delivery.
    "MONITORING_WEBHOOK_TIMEOUT_S": 5.0,
}


def get(name: str):
    """Return the setting `name`, or its default."""
    return getattr(settings, name, DEFAULTS[name])


def poll_budget_s(interval_s: float | None = None) -> float:
    """Return the time one poll may take in all (every request of it): the total timeout, and
    at most 0.8 of the poll interval."""
    total = float(get("MONITORING_TOTAL_TIMEOUT_S"))
    if interval_s:
        total = min(total, max(1.0, interval_s * 0.8))
    return total


def scrape_limits(*, sample_limit: int | None = None) -> ScrapeLimits:
    """Return the limits of one poll: the settings, and the target's own sample_limit if set."""
    return ScrapeLimits(
        sample_limit=sample_limit or int(get("MONITORING_SAMPLE_LIMIT")),
        label_limit=int(get("MONITORING_LABEL_LIMIT")),
        label_name_length_limit=int(get("MONITORING_LABEL_NAME_LENGTH_LIMIT")),
        label_value_length_limit=int(get("MONITORING_LABEL_VALUE_LENGTH_LIMIT")),
        max_exporters=int(get("MONITORING_MAX_EXPORTERS")),
    )


def fetch_policy(
    *,
    interval_s: float | None = None,
    allowlist: Allowlist | None = None,
    sample_limit: int | None = None,
) -> FetchPolicy:
    """Return the limits of one poll: the allowlist, the scrape limits and a time budget for the
    whole poll that stays below the poll interval."""
    from monitoring import reach  # reads the database

    total = poll_budget_s(interval_s)
    return FetchPolicy(
        connect_timeout_s=min(float(get("MONITORING_CONNECT_TIMEOUT_S")), total),
        total_timeout_s=total,
        max_bytes=int(get("MONITORING_MAX_RESPONSE_BYTES")),
        allowlist=allowlist or reach.allowlist(),
        limits=scrape_limits(sample_limit=sample_limit),
    )
