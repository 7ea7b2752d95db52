"""Celery tasks of the monitoring app. Names are an API: never rename them (a test pins them).

- `monitoring.schedule_polls` (beat, every 5 s) fans out one `monitoring.poll_target` per due
  target, each with `expires` shorter than its interval, so a backlog never piles up, and
  stores the fleet's sums of that tick (monitoring.fleet).
- `monitoring.poll_target` polls one target, stores the outcome, evaluates its alerts.
- `monitoring.maintain` (beat, every minute) rolls up raw samples and enforces retention in
  bounded batches.
- `monitoring.deliver_webhook` posts one event transition to its rule's webhook.
- `monitoring.forget_series` deletes a deleted target's series on the time-series server once
  more, after the last write that was under way at its deletion (monitoring.services.
  target_delete).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone

from core import opsmetrics
from monitoring import conf, selectors, stores
from monitoring.alerts.evaluate import alerts_evaluate, event_payload
from monitoring.alerts.webhooks import SIGNATURE_HEADER, webhook_signature
from monitoring.fleet import TICK_STEP_S, fleet_values
from monitoring.models import AlertEvent, Target
from monitoring.polling import pool
from monitoring.polling.record import poll_record_failure, schedule_due_targets
from monitoring.polling.run import OVERDUE_SERIES, PollReport, poll, record_failure
from monitoring.scrape.errors import ScrapeError
from monitoring.scrape.fetch import check_url, guard
from monitoring.series import TargetRef
from monitoring.stores.embedded.retention import partitions_run, retention_run, rollup_run
from monitoring.stores.forget import deleted_target_forget

logger = logging.getLogger(__name__)

SCHEDULE_POLLS = "monitoring.schedule_polls"
POLL_TARGET = "monitoring.poll_target"
MAINTAIN = "monitoring.maintain"
DELIVER_WEBHOOK = "monitoring.deliver_webhook"
FORGET_SERIES = "monitoring.forget_series"
SCHEDULER_INTERVAL_S = float(TICK_STEP_S)  # config/celery.py's beat entry (a test checks)
POLL_SOFT_TIME_LIMIT_S = 30
# Beyond the fetch budget, a poll needs time to store its samples and evaluate alerts.
POLL_STORAGE_MARGIN_S = 5.0
MAX_TRANSPORT_RETRIES = 2


def poll_expiry_s(interval_s: int) -> float:
    """Return how long a queued poll stays valid: less than the interval, so none piles up."""
    return max(1.0, interval_s - 1.0)


def poll_time_limits_s(interval_s: int) -> tuple[float, float]:
    """Return (soft, hard) time limits of one poll task: its fetch budget plus storage time.

    The fetches stop at the budget by themselves; the soft limit catches anything else (a
    parse, a locked database) long before the fixed 30 s default would, so a worker slot is
    never held much longer than one poll's budget.
    """
    soft = conf.poll_budget_s(interval_s) + POLL_STORAGE_MARGIN_S
    return soft, soft + 5.0


@shared_task(name=SCHEDULE_POLLS, ignore_result=True, acks_late=False)
def schedule_polls() -> int:
    """Queue one poll per target due before the next tick; return how many were queued.

    A target due between two ticks is queued now with a countdown to its due time, so that a
    5 s interval is not stretched to 10 s by the 5 s tick. Deliberately no acks_late and no
    retry: a lost tick is replaced by the next one.
    """
    now = timezone.now()
    due = schedule_due_targets(now=now, lookahead_s=SCHEDULER_INTERVAL_S)
    for target_id, slot, interval_s in due:
        countdown = max(0.0, slot - now.timestamp())
        soft_s, hard_s = poll_time_limits_s(interval_s)
        poll_target.apply_async(
            kwargs={"target_id": target_id, "slot": slot},
            countdown=countdown,
            expires=countdown + poll_expiry_s(interval_s),
            soft_time_limit=soft_s,
            time_limit=hard_s,
        )
    _raise_stopped_polls(now)
    fleet_tick_record(now=now)
    return len(due)


def fleet_tick_record(*, now: datetime) -> dict[str, float] | None:
    """Store the fleet's sums at `now` in the series store (the embedded store: one row per
    tick; a Prometheus-compatible server: one series per key); return them, None if no target
    is up."""
    values = fleet_values(now=now)
    if not values:
        return None
    stores.current().write_fleet_sums(now.replace(microsecond=0), values)
    return values


def _raise_stopped_polls(now: datetime) -> None:
    """Feed the "polls stopped" alert of targets whose polls no longer come (starved, expired).

    Such a target runs no poll that could evaluate its alerts, so the scheduler does it for this
    one series; the target's next poll sets it back to 0 and resolves the alert.
    """
    for late in selectors.overdue_targets(now=now):
        # Once per interval of lateness (the count only changes then), not at every 5 s tick:
        # a starved fleet needs no extra database work from its scheduler.
        if (
            late.overdue_s < late.interval_s
            or late.overdue_s % late.interval_s >= SCHEDULER_INTERVAL_S
        ):
            continue
        target = Target.objects.defer("token").get(pk=late.target_id)
        alerts_evaluate(
            target=target,
            values={OVERDUE_SERIES: float(int(late.overdue_s // late.interval_s))},
            now=now,
            on_transition=_on_transition,
            only_series={OVERDUE_SERIES},
        )


def _seconds_left(expires: Any) -> float | None:
    """Return the seconds until the message's expiry (None when it has none)."""
    if not expires:
        return None
    when = expires if isinstance(expires, datetime) else datetime.fromisoformat(str(expires))
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - timezone.now()).total_seconds()


def _on_transition(event: AlertEvent, what: str) -> None:
    opsmetrics.increment("serveplan_alert_events", {"transition": what})
    deliver_webhook.delay(event_id=event.pk, transition=what)


def alerts_evaluator(target: Target) -> Callable[[PollReport], None]:
    """Return what runs after a poll is stored: alert rules, their events and webhooks."""

    def evaluate(report: PollReport) -> None:
        alerts_evaluate(
            target=target, values=report.values, now=report.ts, on_transition=_on_transition
        )

    return evaluate


def poll_now(target: Target) -> PollReport:
    """Poll `target` once now and store the outcome with its alerts, as the worker does.

    No slot and no retry: a transport failure is stored at once (what the worker stores when
    its retries run out). `manage.py poll` and tests drive the pipeline through this.
    """
    started = time.monotonic()
    report = poll(
        target, slot=None, record_transport_errors=True, on_stored=alerts_evaluator(target)
    )
    _count_poll(target, outcome="ok" if report.ok else report.error_kind, started=started)
    return report


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

    Retries only quick transport failures (connect, DNS, a locked database) with backoff, and
    only while the retry still fits before the message expires (the next poll); otherwise the
    failure is stored. A timeout is not retried: it spent the poll's budget. Suspect targets
    (hung, over limits) wait for one of their few slots (monitoring.polling.pool). Storage is
    idempotent per slot: a redelivered message writes nothing twice.
    """
    target = Target.objects.defer("token").filter(pk=target_id, enabled=True).first()
    if target is None:
        return
    started = time.monotonic()
    evaluate = alerts_evaluator(target)
    with pool.poll_slot(target, hold_s=poll_time_limits_s(target.poll_interval_s)[1]) as granted:
        if not granted:  # a suspect target, and the suspects' slots are busy: skip this poll
            _count_poll(target, outcome="deferred", started=started)
            return
        try:
            report = poll(target, slot=slot, record_transport_errors=False, on_stored=evaluate)
            if report.transport_error and not report.stored:
                backoff_s = 2**self.request.retries
                if _may_retry(self, target, slot, backoff_s):
                    raise self.retry(countdown=backoff_s)
                record_failure(target, report, slot=slot, on_stored=evaluate)
            _count_poll(target, outcome="ok" if report.ok else report.error_kind, started=started)
        except SoftTimeLimitExceeded:
            poll_record_failure(
                target=target,
                ts=timezone.now(),
                error_kind="timeout",
                message="the poll exceeded its time limit",
                slot=slot,
            )
            _count_poll(target, outcome="timeout", started=started)
        except OperationalError as exc:  # e.g. SQLite "database is locked": storage transport
            backoff_s = 2**self.request.retries
            if _may_retry(self, target, slot, backoff_s):
                raise self.retry(countdown=backoff_s, exc=exc) from None
            raise


def _may_retry(task: Any, target: Target, slot: int | None, backoff_s: float) -> bool:
    """Return whether one more attempt fits in this poll's slot.

    A retry must land in the first half of the slot's interval and before the message expires,
    so a late attempt is never stored right beside the next slot's poll.
    """
    if task.request.retries >= task.max_retries:
        return False
    late_s = 0.0 if slot is None else max(0.0, time.time() - slot)
    left = _seconds_left(task.request.expires)
    return late_s + backoff_s < target.poll_interval_s / 2 and (
        left is None or backoff_s < left - 1
    )


def _count_poll(target: Target, *, outcome: str, started: float) -> None:
    """Add a finished poll to ServePlan's own /metrics (retried attempts are not counted)."""
    labels = {"kind": target.kind}
    opsmetrics.add(  # one write for the three counters
        [
            ("serveplan_polls", {**labels, "outcome": outcome or "error"}, 1.0),
            *opsmetrics.observation(
                "serveplan_poll_duration_seconds", time.monotonic() - started, labels
            ),
        ]
    )


@shared_task(name=MAINTAIN, ignore_result=True, acks_late=True, soft_time_limit=50)
def maintain() -> None:
    """Create the coming hours' sample partitions (PostgreSQL), roll up raw samples into
    one-minute aggregates, then delete what retention allows."""
    created = partitions_run()
    minutes = rollup_run()
    result = retention_run()
    logger.info(
        "monitoring maintenance: %d sample partitions created, %d minutes rolled up,"
        " %d sample partitions dropped, %d samples and %d rollups deleted",
        len(created),
        minutes,
        result.partitions_dropped,
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
    # Never the target's token: one no key can read (rotated away) must not stop its alerts.
    event = (
        AlertEvent.objects.select_related("rule", "target")
        .defer("target__token")
        .filter(pk=event_id)
        .first()
    )
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
    timeout = settings.MONITORING_WEBHOOK_TIMEOUT_S
    body = json.dumps(event_payload(event, transition), separators=(",", ":")).encode()
    headers = {
        "Host": parsed.netloc.decode("ascii"),
        "User-Agent": "ServePlan",
        "Content-Type": "application/json",
    }
    if event.rule.webhook_secret:
        headers[SIGNATURE_HEADER] = webhook_signature(event.rule.webhook_secret, body)
    else:  # set before webhooks were signed: an admin sets the URL again to get a secret
        logger.warning("webhook of rule %s has no secret: sent unsigned", event.rule_id)
    try:
        # Connect to the checked address (no DNS rebinding between check and connect). Only
        # the status is read: the receiver's body, however large or slow, is never downloaded.
        with (
            httpx.Client(follow_redirects=False, trust_env=False, timeout=timeout) as client,
            client.stream(
                "POST",
                parsed.copy_with(host=address),
                content=body,
                headers=headers,
                extensions={"sni_hostname": parsed.host} if parsed.scheme == "https" else {},
            ) as response,
        ):
            status = response.status_code
    except httpx.TransportError as exc:
        raise self.retry(countdown=2 ** (self.request.retries + 1), exc=exc) from None
    if status >= 500:
        raise self.retry(countdown=2 ** (self.request.retries + 1))
    if status >= 400:
        logger.warning("webhook of rule %s answered %s", event.rule_id, status)


@shared_task(name=FORGET_SERIES, ignore_result=True, acks_late=True, soft_time_limit=30)
def forget_series(*, target_id: int, name: str, kind: str) -> None:
    """Delete a deleted target's series again (a poll that committed just before the delete
    may have sent one request after the first deletion)."""
    deleted_target_forget(ref=TargetRef(id=target_id, name=name, kind=kind, interval_s=0))
