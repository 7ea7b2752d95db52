"""The limits of one poll, derived from the monitoring settings (config/settings/base.py)."""

from __future__ import annotations

from django.conf import settings

from monitoring.scrape.fetch import Allowlist, FetchPolicy
from monitoring.scrape.limits import ScrapeLimits
from monitoring.targets import reach


def poll_budget_s(interval_s: float | None = None) -> float:
    """Return the time one poll may take in all (every request of it): the total timeout, and
    at most 0.8 of the poll interval."""
    total = float(settings.MONITORING_TOTAL_TIMEOUT_S)
    if interval_s:
        total = min(total, max(1.0, interval_s * 0.8))
    return total


def scrape_limits(*, sample_limit: int | None = None) -> ScrapeLimits:
    """Return the limits of one poll: the settings, and the target's own sample_limit if set."""
    return ScrapeLimits(
        sample_limit=sample_limit or settings.MONITORING_SAMPLE_LIMIT,
        label_limit=settings.MONITORING_LABEL_LIMIT,
        label_name_length_limit=settings.MONITORING_LABEL_NAME_LENGTH_LIMIT,
        label_value_length_limit=settings.MONITORING_LABEL_VALUE_LENGTH_LIMIT,
        max_exporters=settings.MONITORING_MAX_EXPORTERS,
    )


def fetch_policy(
    *,
    interval_s: float | None = None,
    allowlist: Allowlist | None = None,
    sample_limit: int | None = None,
) -> FetchPolicy:
    """Return the limits of one poll: the allowlist, the scrape limits and a time budget for the
    whole poll that stays below the poll interval."""
    total = poll_budget_s(interval_s)
    return FetchPolicy(
        connect_timeout_s=min(settings.MONITORING_CONNECT_TIMEOUT_S, total),
        total_timeout_s=total,
        max_bytes=settings.MONITORING_MAX_RESPONSE_BYTES,
        allowlist=allowlist or reach.allowlist(),
        limits=scrape_limits(sample_limit=sample_limit),
    )
