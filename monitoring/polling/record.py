"""Recording a poll (success or failure) and scheduling the polls that are due."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core import opsmetrics
from monitoring import pacing, stores
from monitoring.models import PollStatus, Target, TargetSnapshot
from monitoring.scrape import keys
from monitoring.scrape.series import series_id
from monitoring.series import WriteBatch, WriteSample

logger = logging.getLogger(__name__)


# Unlabelled series copied into Target.latest for the fleet overview, plus the labelled ones the
# key table marks `latest` (Ray GPU resources, per-GPU readings for the Machines view).
LATEST_LABELLED = keys.LATEST_LABELLED
MAX_ERROR_CHARS = 1000
# --- polls ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PollOutcome:
    """What one poll produced, in storage terms (built by monitoring.polling from scrape)."""

    samples: Sequence[Any]  # monitoring.scrape.series.Sample
    snapshot: Mapping[str, Any] | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    exporters: Sequence[str] | None = None
    warnings: Sequence[str] = ()
    duration_ms: float = 0.0


def _claim(target_id: int, slot: int | None, **values: Any) -> bool:
    """Update the target row for this poll unless the slot was already stored (redelivery)."""
    qs = Target.objects.filter(pk=target_id)
    if slot is not None:
        qs = qs.filter(Q(last_slot__isnull=True) | Q(last_slot__lt=slot))
        values["last_slot"] = slot
    return qs.update(**values) == 1


def _missed_before(target: Target, ts: datetime) -> int:
    """Return the polls of `target` that should have run since its last one and did not."""
    if target.last_poll_at is None:
        return 0
    if target.rescheduled_at is not None and target.rescheduled_at > target.last_poll_at:
        return 0  # the user restarted its schedule since (new interval, re-enabled)
    gap_s = (ts - target.last_poll_at).total_seconds()
    return pacing.missed_polls(gap_s, target.poll_interval_s, target.spacing_factor)


def _count_missed(target: Target, missed: int, rows: list[WriteSample]) -> None:
    if missed:
        rows.append(WriteSample("poll.missed", (), float(missed)))
        opsmetrics.increment("serveplan_polls_missed", {"kind": target.kind}, amount=missed)


def _write(target: Target, ts: datetime, rows: list[WriteSample]) -> None:
    """Hand one poll's samples to the series store (in the poll's transaction). A read-only
    target's series are already in the Prometheus it was read from: nothing is written."""
    if target.read_only:
        return
    stores.current().write(WriteBatch(target=stores.ref(target), ts=ts, samples=tuple(rows)))


def _poll_values(target: Target, outcome: PollOutcome, failures: int) -> dict[str, float]:
    values = {"poll.up": 1.0 if failures == 0 else 0.0, "poll.consecutive_failures": failures}
    if outcome.duration_ms:
        values["poll.duration_ms"] = outcome.duration_ms
    return values


def poll_record_success(
    *, target: Target, ts: datetime, outcome: PollOutcome, slot: int | None = None
) -> int:
    """Store a successful poll: samples (idempotent), snapshot and target status.

    Return the number of sample rows offered for insertion (0 when the slot was already stored).
    """
    latest: dict[str, float] = {}
    rows: list[WriteSample] = []
    seen: set[tuple[str, str]] = set()
    for sample in outcome.samples:
        labels = series_id("", sample.labels)
        if (sample.key, labels) in seen:
            continue  # the same series twice in one poll: keep the first
        seen.add((sample.key, labels))
        rows.append(WriteSample(sample.key, sample.labels, sample.value))
        if not labels or sample.key in LATEST_LABELLED:
            latest[sample.key + labels] = sample.value
    for key, value in _poll_values(target, outcome, 0).items():
        rows.append(WriteSample(key, (), float(value)))
        latest[key] = value
    info = dict(outcome.info)
    if outcome.warnings:
        info["warnings"] = list(outcome.warnings)[:20]
    update: dict[str, Any] = {
        "last_poll_at": ts,
        "last_success_at": ts,
        "last_status": PollStatus.OK,
        "last_duration_ms": outcome.duration_ms,
        "consecutive_failures": 0,
        "info": info,
        "latest": latest,
    }
    if outcome.exporters is not None:
        update["discovered_exporters"] = list(outcome.exporters)
    missed = _missed_before(target, ts)
    # No savepoint inside the poll's transaction (monitoring.polling): an error rolls it all back.
    with transaction.atomic(savepoint=False):
        if not _claim(target.pk, slot, missed_polls=F("missed_polls") + missed, **update):
            return 0
        _count_missed(target, missed, rows)
        _write(target, ts, rows)
        if outcome.snapshot is not None:
            TargetSnapshot.objects.update_or_create(
                target_id=target.pk, defaults={"taken_at": ts, "data": dict(outcome.snapshot)}
            )
    for name, value in update.items():
        setattr(target, name, value)
    target.missed_polls += missed
    if slot is not None:
        target.last_slot = slot
    return len(rows)


def poll_record_failure(
    *,
    target: Target,
    ts: datetime,
    error_kind: str,
    message: str,
    duration_ms: float = 0.0,
    slot: int | None = None,
) -> bool:
    """Store a failed poll on the target (time, kind, message); every earlier sample stays."""
    failures = target.consecutive_failures + 1
    update: dict[str, Any] = {
        "last_poll_at": ts,
        "last_status": PollStatus.ERROR,
        "last_error": message[:MAX_ERROR_CHARS],
        "last_error_kind": error_kind[:32],
        "last_error_at": ts,
        "last_duration_ms": duration_ms,
        "consecutive_failures": failures,
    }
    factor = pacing.backoff_factor(error_kind, failures)
    if factor > 1:  # an expensive failure: the next poll waits (see monitoring.pacing)
        # `factor` intervals after the slot it was due in, on the target's grid.
        base = ts.timestamp()
        if slot is not None and abs(base - slot) < target.poll_interval_s * factor:
            base = float(slot)
        due = pacing.slot_at_or_after(
            base + target.poll_interval_s * factor,
            target.poll_interval_s,
            pacing.phase_s(target.pk, target.poll_interval_s),
        )
        update["next_poll_at"] = datetime.fromtimestamp(due, tz=UTC)
    latest = dict(target.latest or {})
    latest.update({"poll.up": 0.0, "poll.consecutive_failures": float(failures)})
    update["latest"] = latest
    rows = [
        WriteSample("poll.up", (), 0.0),
        WriteSample("poll.consecutive_failures", (), float(failures)),
    ]
    missed = _missed_before(target, ts)
    with transaction.atomic(savepoint=False):  # as in poll_record_success
        if not _claim(target.pk, slot, missed_polls=F("missed_polls") + missed, **update):
            return False
        _count_missed(target, missed, rows)
        _write(target, ts, rows)
    for name, value in update.items():
        setattr(target, name, value)
    target.missed_polls += missed
    logger.info("poll of target %s failed (%s): %s", target.pk, error_kind, message[:200])
    return True


def schedule_due_targets(
    *, now: datetime | None = None, lookahead_s: float = 0.0
) -> list[tuple[int, int, int]]:
    """Advance the next poll time of every target due by `now + lookahead_s`.

    Return (target_id, slot, interval_s) of each; the slot is the unix second the poll is due
    (never before `now`): a redelivered poll of the same slot is skipped. Slots lie on each
    target's own grid (monitoring.pacing.plan_slot), so a fleet's polls are spread over the
    interval instead of all due at one tick; a new target is queued within a minute.
    """
    now = now or timezone.now()
    horizon = now + timedelta(seconds=lookahead_s)
    due: list[tuple[int, int, int]] = []
    with transaction.atomic():
        targets = list(
            Target.objects.filter(enabled=True)
            .filter(Q(next_poll_at__isnull=True) | Q(next_poll_at__lt=horizon))
            .only(
                "pk",
                "poll_interval_s",
                "next_poll_at",
                "last_status",
                "last_error_kind",
                "consecutive_failures",
            )
        )
        for target in targets:
            # On the target's own grid (monitoring.pacing): its polls are spread over the
            # interval, and one whose polls keep costing their whole budget waits 2, then 4.
            plan = pacing.plan_slot(
                target_id=target.pk,
                interval_s=target.poll_interval_s,
                factor=target.spacing_factor,
                next_poll_at=target.next_poll_at.timestamp() if target.next_poll_at else None,
                now=now.timestamp(),
                horizon=horizon.timestamp(),
            )
            target.next_poll_at = datetime.fromtimestamp(plan.next_poll_at, tz=UTC)
            if plan.slot is not None:
                due.append((target.pk, plan.slot, target.poll_interval_s))
        Target.objects.bulk_update(targets, ["next_poll_at"], batch_size=500)
    return due
