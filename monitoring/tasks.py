"""Celery tasks of the monitoring app. Names are an API: never rename them (a test pins them).

- `monitoring.schedule_polls` (beat, every 5 s) fans out one `monitoring.poll_target` per due
  target, each with `expires` shorter than its interval, so a backlog never piles up.
- `monitoring.poll_target` polls one target, stores the outcome, evaluates its alerts.
- `monitoring.maintain` (beat, every minute) rolls up raw samples and enforces retention in
  bounded batches.
- `monitoring.deliver_webhook` posts one event transition to its rule's webhook.
"""

from __future__ import annotations

import logging

import httpx
from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError
from django.utils import timezone

from monitoring import conf
from monitoring.alerting import alerts_evaluate, event_payload
from monitoring.models import AlertEvent, Target
from monitoring.polling import poll
from monitoring.retention import retention_run, rollup_run
from monitoring.scrape.errors import ScrapeError
from monitoring.scrape.fetch import check_url, guard
from monitoring.services import poll_record_failure, schedule_due_targets

logger = logging.getLogger(__name__)

SCHEDULE_POLLS = "monitoring.schedule_polls"
POLL_TARGET = "monitoring.poll_target"
MAINTAIN = "monitoring.maintain"
DELIVER_WEBHOOK = "monitoring.deliver_webhook"
SCHEDULER_INTERVAL_S = 5.0
POLL_SOFT_TIME_LIMIT_S = 30
MAX_TRANSPORT_RETRIES = 2


def poll_expiry_s(interval_s: int) -> float:
    """Return how long a queued poll stays valid: less than the interval, so none piles up."""
    return max(1.0, interval_s - 1.0)


@shared_task(name=SCHEDULE_POLLS, ignore_result=True, acks_late=False)
def schedule_polls() -> int:
    """Queue one poll per due target; return how many were queued.

    Deliberately no acks_late and no retry: a lost tick is replaced by the next one 5 s later.
    """
    due = schedule_due_targets()
    for target_id, slot, interval_s in due:
        poll_target.apply_async(
            kwargs={"target_id": target_id, "slot": slot}, expires=poll_expiry_s(interval_s)
        )
    return len(due)


@shared_task(
    bind=True,
    name=POLL_TARGET,
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=False,
    soft_time_limit=POLL_SOFT_TIME_LIMIT_S,
    time_limit=POLL_SOFT_TIME_LIMIT_S + 10,
    max_retries=MAX_TRANSPORT_RETRIES,
)
def poll_target(self, *, target_id: int, slot: int | None = None) -> None:
    """Poll one target, store what it answered (or the error), then evaluate its alerts.

    Retries only transport failures (connect, timeout, DNS, a locked database) with backoff, and
    only while the retry still fits before the next poll; the last attempt stores the error.
    Storage is idempotent per slot, so a redelivered message writes nothing twice.
    """
    target = Target.objects.defer("token").filter(pk=target_id, enabled=True).first()
    if target is None:
        return
    retries_left = self.request.retries < self.max_retries
    backoff_s = 2**self.request.retries
    fits = backoff_s < target.poll_interval_s / 2
    try:
        report = poll(target, slot=slot, record_transport_errors=not (retries_left and fits))
    except SoftTimeLimitExceeded:
        poll_record_failure(
            target=target,
            ts=timezone.now(),
            error_kind="timeout",
            message=f"the poll exceeded its time limit of {POLL_SOFT_TIME_LIMIT_S} s",
            slot=slot,
        )
        return
    except OperationalError as exc:  # e.g. SQLite "database is locked": storage transport
        if retries_left:
            raise self.retry(countdown=backoff_s, exc=exc) from None
        raise
    if report.transport_error and not report.stored and retries_left and fits:
        raise self.retry(countdown=backoff_s)
    if report.stored:
        alerts_evaluate(
            target=target,
            values=report.values,
            now=report.ts,
            on_transition=lambda event, what: deliver_webhook.delay(
                event_id=event.pk, transition=what
            ),
        )


@shared_task(name=MAINTAIN, ignore_result=True, acks_late=True, soft_time_limit=50)
def maintain() -> None:
    """Roll up raw samples into one-minute aggregates, then delete what retention allows."""
    minutes = rollup_run()
    result = retention_run()
    logger.info(
        "monitoring maintenance: %d minutes rolled up, %d samples and %d rollups deleted",
        minutes,
        result.samples_deleted,
        result.rollups_deleted,
    )


@shared_task(
    bind=True,
    name=DELIVER_WEBHOOK,
    ignore_result=True,
    acks_late=True,
    max_retries=5,
    soft_time_limit=30,
)
def deliver_webhook(self, *, event_id: int, transition: str) -> None:
    """POST an event transition as JSON to its rule's webhook; retry transport errors and 5xx."""
    event = AlertEvent.objects.select_related("rule", "target").filter(pk=event_id).first()
    if event is None or not event.rule.webhook_url:
        return
    url = event.rule.webhook_url
    policy = conf.fetch_policy()
    try:
        address = guard(check_url(url), policy)
    except ScrapeError as exc:
        logger.warning("webhook of rule %s refused: %s", event.rule_id, exc)
        return
    parsed = httpx.URL(url)
    timeout = float(conf.get("MONITORING_WEBHOOK_TIMEOUT_S"))
    try:
        # Connect to the checked address (no DNS rebinding between check and connect).
        with httpx.Client(follow_redirects=False, trust_env=False, timeout=timeout) as client:
            response = client.post(
                parsed.copy_with(host=address),
                json=event_payload(event, transition),
                headers={"Host": parsed.netloc.decode("ascii"), "User-Agent": "ServePlan"},
                extensions={"sni_hostname": parsed.host} if parsed.scheme == "https" else {},
            )
    except httpx.TransportError as exc:
        raise self.retry(countdown=2 ** (self.request.retries + 1), exc=exc) from None
    if response.status_code >= 500:
        raise self.retry(countdown=2 ** (self.request.retries + 1))
    if response.status_code >= 400:
        logger.warning("webhook of rule %s answered %s", event.rule_id, response.status_code)
