"""Creating, changing and deleting targets, and the GPU targets registered from machines."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from inventory.models import Machine
from monitoring import stores, tasks
from monitoring.models import PlanScope, Target, TargetKind
from monitoring.series import ForgetReport, TargetRef
from monitoring.services.rules import default_rules_create, ttft_rule_sync
from monitoring.services.url_guard import validate_monitored_url
from monitoring.stores.forget import forget_series

logger = logging.getLogger(__name__)


TARGET_FIELDS = (
    "name",
    "kind",
    "base_url",
    "selector",
    "poll_interval_s",
    "enabled",
    "plan",
    "pool_plan",
    "pool_model",
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
    pool_plan: Any | None = None,
    pool_model: str = "",
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
        pool_plan=pool_plan,
        pool_model=pool_model,
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
    report = forget_series(ref)
    if report.again_after_s is not None:
        transaction.on_commit(lambda: _forget_later(ref, report))
    return report


def _forget_later(ref: TargetRef, report: ForgetReport) -> None:
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
