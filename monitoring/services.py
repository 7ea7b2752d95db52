"""Every write of the monitoring app: targets, polls, alert rules. Keyword-only, atomic."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core import opsmetrics
from monitoring import conf, kinds, pacing, stores
from monitoring.kinds import RuleContext, RuleSpec
from monitoring.models import (
    AlertRule,
    AllowlistEntry,
    Comparison,
    PlanScope,
    PollStatus,
    Target,
    TargetKind,
    TargetSnapshot,
)
from monitoring.scrape import keys
from monitoring.scrape.errors import ScrapeError
from monitoring.scrape.fetch import check_url, guard
from monitoring.scrape.series import series_id
from monitoring.series import ForgetReport, Forgotten, TargetRef, WriteBatch, WriteSample

logger = logging.getLogger(__name__)

# Unlabelled series copied into Target.latest for the fleet overview, plus the labelled ones the
# key table marks `latest` (Ray GPU resources, per-GPU readings for the Machines view).
LATEST_LABELLED = keys.LATEST_LABELLED
MAX_ERROR_CHARS = 1000


# --- URL guard ------------------------------------------------------------------------------


def validate_monitored_url(url: str, *, field_name: str = "base_url") -> None:
    """Refuse URLs the poller would refuse: scheme, credentials, forbidden or unlisted addresses.

    Checked after DNS resolution, here and again on every poll (an answer can change).
    """
    try:
        guard(check_url(url), conf.fetch_policy())
    except ScrapeError as exc:
        raise ValidationError({field_name: str(exc)}, code=exc.kind) from None


# --- targets --------------------------------------------------------------------------------


TARGET_FIELDS = (
    "name",
    "kind",
    "base_url",
    "selector",
    "poll_interval_s",
    "enabled",
    "plan",
    "plan_scope",
    "decision",
    "sample_limit",
)


def target_create(
    *,
    name: str,
    kind: str,
    base_url: str = "",
    selector: str = "",
    poll_interval_s: int | None = None,
    enabled: bool = True,
    token: str = "",
    plan: Any | None = None,
    plan_scope: str = PlanScope.REPLICA,
    decision: Any | None = None,
    machines: Iterable[Any] = (),
    sample_limit: int | None = None,
) -> Target:
    """Create a target with its default alert rules; it is polled at the next scheduler tick
    (a read-only target, one with a Prometheus `selector`, is read from Prometheus instead)."""
    target = Target(
        name=name,
        kind=kind,
        base_url=base_url.rstrip("/"),
        selector=selector.strip(),
        poll_interval_s=poll_interval_s or settings.MONITORING_DEFAULT_POLL_INTERVAL_S,
        enabled=enabled,
        plan=plan,
        plan_scope=plan_scope,
        decision=decision,
        sample_limit=sample_limit,
    )
    with transaction.atomic():
        target.full_clean()
        if not target.read_only:
            validate_monitored_url(target.base_url)
        target.token = token
        target.save()
        machines = list(machines)
        if machines and hasattr(target, "machines"):
            target.machines.set(machines)
        default_rules_create(target=target)
    return target


def target_update(
    *,
    target: Target,
    token: str | None = None,
    clear_token: bool = False,
    machines: Iterable[Any] | None = None,
    **changes: Any,
) -> Target:
    """Change a target's settings; `token=None` keeps the saved token, `clear_token` removes it."""
    unknown = set(changes) - set(TARGET_FIELDS)
    if unknown:
        raise TypeError(f"target_update() got unknown fields: {sorted(unknown)}")
    for name, value in changes.items():
        if name == "base_url":
            value = value.rstrip("/")
        setattr(target, name, value)
    with transaction.atomic():
        target.full_clean()
        if "base_url" in changes and not target.read_only:
            validate_monitored_url(target.base_url)
        if clear_token:
            target.token = ""
        elif token:
            target.token = token
        if {"poll_interval_s", "enabled"} & set(changes):
            target.next_poll_at = None  # poll at the next tick with the new settings
            target.rescheduled_at = timezone.now()
        target.save()
        if machines is not None and hasattr(target, "machines"):
            target.machines.set(list(machines))
        if "decision" in changes:
            ttft_rule_sync(target=target)
    return target


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuRegistration:
    """What `gpu_targets_register` did: target names created and updated, machines refused."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (hostname, why)


def gpu_target_name(hostname: str) -> str:
    return f"gpu-{hostname}"[:100]


def gpu_targets_register(*, machines: Iterable[Any] | None = None) -> GpuRegistration:
    """Create or update one GPU target per machine with a GPU metrics URL, linked to it.

    Idempotent: a machine's target is found by its link (or by its name `gpu-<hostname>`) and
    its URL updated when the machine's changed. One machine's bad URL refuses that machine
    only (each target is written in its own transaction).
    """
    from inventory.models import Machine

    if machines is None:
        machines = Machine.objects.exclude(gpu_metrics_url="").order_by("hostname")
    report = GpuRegistration()
    for machine in machines:
        if not machine.gpu_metrics_url:
            continue
        existing = (
            Target.objects.defer("token")
            .filter(kind=TargetKind.GPU, machines=machine)
            .order_by("pk")
            .first()
        ) or Target.objects.defer("token").filter(name=gpu_target_name(machine.hostname)).first()
        try:
            if existing is None:
                target = target_create(
                    name=gpu_target_name(machine.hostname),
                    kind=TargetKind.GPU,
                    base_url=machine.gpu_metrics_url,
                    machines=[machine],
                )
                report.created.append(target.name)
            elif (
                existing.kind != TargetKind.GPU
                or existing.base_url != machine.gpu_metrics_url.rstrip("/")
                or not existing.machines.filter(pk=machine.pk).exists()
            ):
                target_update(
                    target=existing,
                    kind=TargetKind.GPU,
                    base_url=machine.gpu_metrics_url,
                    machines=[machine],
                )
                report.updated.append(existing.name)
            else:
                report.unchanged.append(existing.name)
        except ValidationError as exc:
            messages = "; ".join(
                f"{name}: {' '.join(errors)}" for name, errors in exc.message_dict.items()
            )
            report.refused.append((machine.hostname, messages))
    return report


def ttft_rule_sync(*, target: Target) -> None:
    """Set the default TTFT p95 rule's threshold from the linked decision (or the default)."""
    ttft = decision_ttft_threshold_s(target) or settings.MONITORING_DEFAULT_TTFT_P95_THRESHOLD_S
    AlertRule.objects.filter(target=target, is_default=True, series="vllm.ttft_seconds.p95").update(
        threshold=ttft, name=f"TTFT p95 above {ttft:g} s"
    )


def target_delete(*, target: Target) -> ForgetReport:
    """Delete a target with its samples, rollups, rules and events, then its series on a
    time-series server (the report says if the server kept them, and how to delete them).

    A poll that committed just before the delete may still have one request under way to the
    server, which would bring back that poll's series: the series are deleted once more when
    it must have arrived (the store's `again_after_s`; monitoring.forget_series).

    The target's row is locked (FOR UPDATE) before anything is deleted: what refers to it and
    commits meanwhile (a poll, a spooled remote write: monitoring.stores.spool) either commits
    first and is deleted with it, or waits and finds it gone; neither fails at commit on the
    foreign key. Raises Target.DoesNotExist when another delete took it first."""
    ref = stores.ref(target)
    with transaction.atomic():
        if not list(Target.objects.select_for_update().filter(pk=target.pk).values_list("pk")):
            raise Target.DoesNotExist(f"target {target.pk} was deleted meanwhile")
        target.delete()
    report = _forget(ref)
    if report.again_after_s is not None:
        transaction.on_commit(lambda: _forget_later(ref, report))
    return report


def deleted_target_forget(*, ref: TargetRef) -> ForgetReport | None:
    """Delete a deleted target's series on the time-series server again (None: the target
    exists, its series are never deleted)."""
    if Target.objects.filter(pk=ref.id).exists():
        return None
    return _forget(ref)


def _forget(ref: TargetRef) -> ForgetReport:
    report = stores.current().forget(ref)
    if report.outcome is Forgotten.KEPT:
        logger.warning(
            "target %s deleted, its series %s kept by the server: %s",
            ref.name,
            report.selector,
            report.reason,
        )
    return report


def _forget_later(ref: TargetRef, report: ForgetReport) -> None:
    from monitoring import tasks

    try:
        tasks.forget_series.apply_async(
            kwargs={"target_id": ref.id, "name": ref.name, "kind": ref.kind},
            countdown=report.again_after_s,
        )
    except Exception:  # the broker is down: the delete itself is done
        logger.warning(
            "target %s deleted; its series could not be queued for a second delete: a poll"
            " under way may have sent them again (delete %s by hand if they are back)",
            ref.name,
            report.selector,
            exc_info=True,
        )


# --- alert rules ----------------------------------------------------------------------------


def decision_ttft_threshold_s(target: Target) -> float | None:
    """Return the TTFT p95 threshold of the target's decision record, in seconds, if any."""
    from planner.decisions.selectors import latency_slo

    ttft_ms = latency_slo(target.decision_id).ttft_p95_ms
    return None if ttft_ms is None else ttft_ms / 1000.0


def default_rule_specs(kind: str, *, ttft_threshold_s: float | None = None) -> list[RuleSpec]:
    """Return the rules every new target of `kind` gets (English names: rules are data).

    The TTFT p95 rule uses the linked decision's threshold when there is one.
    """
    ttft = ttft_threshold_s or settings.MONITORING_DEFAULT_TTFT_P95_THRESHOLD_S
    return kinds.get(kind).default_rules(RuleContext(ttft_threshold_s=ttft))


def default_rules_create(*, target: Target) -> list[AlertRule]:
    """Create the default rules of `target` (idempotent: existing defaults are kept)."""
    existing = set(
        AlertRule.objects.filter(target=target, is_default=True).values_list("series", flat=True)
    )
    rules = [
        AlertRule(
            target=target,
            name=spec.name,
            series=spec.series,
            comparison=spec.comparison,
            threshold=spec.threshold,
            duration_s=spec.duration_s,
            is_default=True,
        )
        for spec in default_rule_specs(
            target.kind, ttft_threshold_s=decision_ttft_threshold_s(target)
        )
        if spec.series not in existing
    ]
    return AlertRule.objects.bulk_create(rules)


def alert_rule_create(
    *,
    name: str,
    series: str,
    threshold: float,
    comparison: str = Comparison.GT,
    duration_s: int = 0,
    target: Target | None = None,
    enabled: bool = True,
) -> AlertRule:
    """Create an alert rule for one target or, without target, for every target (its webhook,
    if any, is an admin's to set: alert_rule_webhook_set)."""
    rule = AlertRule(
        name=name,
        series=series,
        comparison=comparison,
        threshold=threshold,
        duration_s=duration_s,
        target=target,
        enabled=enabled,
    )
    with transaction.atomic():
        rule.full_clean()
        rule.save()
    return rule


def alert_rule_webhook_set(*, rule: AlertRule, url: str) -> str:
    """Point the rule's webhook at `url` with a new signing secret; return the secret (shown
    once). An empty `url` removes the webhook and its secret. Admins only (the views check)."""
    url = (url or "").strip()
    rule.webhook_url = url
    rule.webhook_secret = secrets.token_urlsafe(32) if url else ""
    with transaction.atomic():
        rule.full_clean(exclude=["webhook_secret"])
        if url:
            validate_monitored_url(url, field_name="webhook_url")
        rule.save(update_fields=["webhook_url", "webhook_secret"])
    return rule.webhook_secret


def alert_rule_update(*, rule: AlertRule, **changes: Any) -> AlertRule:
    """Change an alert rule's fields (its webhook: alert_rule_webhook_set)."""
    allowed = {"name", "series", "comparison", "threshold", "duration_s", "enabled"}
    unknown = set(changes) - allowed
    if unknown:
        raise TypeError(f"alert_rule_update() got unknown fields: {sorted(unknown)}")
    for name, value in changes.items():
        setattr(rule, name, value)
    with transaction.atomic():
        rule.full_clean()
        rule.save()
    return rule


# --- allowlist (admins) ---------------------------------------------------------------------


def allowlist_entry_create(*, name: str, note: str = "") -> AllowlistEntry:
    """Let pollers and webhooks reach `name` (an address, network, host name or .suffix)."""
    from monitoring.reach import validate_entry

    try:
        normalised = validate_entry(name)
    except ValidationError as exc:
        raise ValidationError({"name": exc.messages}) from None
    entry = AllowlistEntry(name=normalised, note=note.strip())
    with transaction.atomic():
        entry.full_clean()
        entry.save()
    return entry


def allowlist_entry_delete(*, entry: AllowlistEntry) -> None:
    """Remove an entry; targets that needed it fail their next poll as forbidden_address."""
    with transaction.atomic():
        entry.delete()


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
