"""Gauges for ServePlan's own /metrics, computed when Prometheus scrapes (core.opsmetrics)."""

import logging
from collections.abc import Iterator
from pathlib import Path

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily, Metric

from config.celery import app as celery_app
from monitoring.models import AlertEvent, Target
from monitoring.selectors import polling_health

logger = logging.getLogger(__name__)


def collect() -> Iterator[Metric]:
    """Yield scheduler lag, targets by last poll status, open alerts and the queue length."""
    health = polling_health()
    lag = GaugeMetricFamily(
        "serveplan_scheduler_lag_seconds",
        "How long the most overdue enabled target has waited past the end of its next poll"
        " (measured from finished polls, so starved or expired polls count).",
    )
    lag.add_metric([], health.lag_s)
    yield lag
    late = GaugeMetricFamily(
        "serveplan_targets_late", "Enabled targets more than one poll interval overdue."
    )
    late.add_metric([], health.late_targets)
    yield late

    targets = GaugeMetricFamily(
        "serveplan_targets", "Enabled targets by the status of their last poll.", labels=["status"]
    )
    for row in Target.objects.filter(enabled=True).values("last_status").annotate(n=Count("pk")):
        targets.add_metric([row["last_status"] or "never"], row["n"])
    yield targets

    alerts = GaugeMetricFamily("serveplan_alerts_open", "Alert events open now.")
    alerts.add_metric([], AlertEvent.objects.filter(resolved_at__isnull=True).count())
    yield alerts

    length = queue_length()
    if length is not None:
        queue = GaugeMetricFamily(
            "serveplan_queue_length", "Tasks waiting in the Celery queue (not yet taken)."
        )
        queue.add_metric([], length)
        yield queue


def queue_length(queue: str = "celery") -> int | None:
    """Return the messages waiting in the default queue, or None when the broker can't say."""
    url = celery_app.conf.broker_url or ""
    try:
        if url.startswith("filesystem://"):
            folder = Path(celery_app.conf.broker_transport_options["data_folder_in"])
            return sum(1 for p in folder.glob(f"*.{queue}.msg"))
        if url.startswith(("redis://", "rediss://")):
            with celery_app.connection_for_read() as conn:
                return int(conn.default_channel.client.llen(queue))
    except Exception:  # noqa: BLE001 - a metrics scrape must not fail on the broker
        logger.warning("could not read the length of queue %s", queue, exc_info=True)
    return None
