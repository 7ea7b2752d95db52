"""Alert evaluation after each poll, and the JSON that webhooks receive."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q

from monitoring.models import AlertEvent, AlertRule, AlertState, Target


def rules_for(target: Target) -> list[AlertRule]:
    """Return the enabled rules that apply to `target` (its own and the fleet-wide ones)."""
    return list(AlertRule.objects.filter(Q(target=target) | Q(target__isnull=True), enabled=True))


def alerts_evaluate(
    *,
    target: Target,
    values: Mapping[str, float],
    now: datetime,
    on_transition: Callable[[AlertEvent, str], None] | None = None,
    only_series: Collection[str] | None = None,
) -> list[tuple[AlertEvent, str]]:
    """Open and resolve events of `target` from the values of its last poll.

    A rule's series is a bare key (its largest label set counts) or a full series id. A missing
    series is "no data" and does not breach. With `only_series`, the other rules are left as
    they are (the scheduler's view of a target whose polls stopped). Return (event, "opened" |
    "resolved") transitions.
    """
    rules = rules_for(target)
    if only_series is not None:
        rules = [rule for rule in rules if rule.series in only_series]
    if not rules:
        return []
    states = {s.rule_id: s for s in AlertState.objects.filter(target=target)}
    open_events = {
        e.rule_id: e for e in AlertEvent.objects.filter(target=target, resolved_at__isnull=True)
    }
    transitions: list[tuple[AlertEvent, str]] = []
    # No savepoint: inside a poll's transaction it would be two more round trips per poll, and
    # an error here rolls the whole poll back anyway.
    with transaction.atomic(savepoint=False):
        for rule in rules:
            value = values.get(rule.series)
            breached = value is not None and rule.breached(value)
            state = states.get(rule.pk)
            event = open_events.get(rule.pk)
            if breached:
                if state is None:
                    state = AlertState.objects.create(rule=rule, target=target, breaching_since=now)
                elif state.breaching_since is None:
                    state.breaching_since = now
                    state.save(update_fields=["breaching_since"])
                held = now - state.breaching_since >= timedelta(seconds=rule.duration_s)
                if event is not None:
                    event.last_value = value
                    event.save(update_fields=["last_value"])
                elif held:
                    opened = _open(rule, target, value, now)
                    if opened is not None:
                        transitions.append((opened, "opened"))
            else:
                if state is not None and state.breaching_since is not None:
                    state.breaching_since = None
                    state.save(update_fields=["breaching_since"])
                if event is not None:
                    event.resolved_at = now
                    if value is not None:
                        event.last_value = value
                    event.save(update_fields=["resolved_at", "last_value"])
                    transitions.append((event, "resolved"))
        if on_transition is not None:
            for event, what in transitions:
                transaction.on_commit(lambda e=event, w=what: on_transition(e, w))
    return transitions


def _open(rule: AlertRule, target: Target, value: float, now: datetime) -> AlertEvent | None:
    message = (
        f"{target.name}: {rule.name} ({rule.series} = {value:.4g}, "
        f"{rule.get_comparison_display()} {rule.threshold:g})"
    )
    try:
        with transaction.atomic():
            return AlertEvent.objects.create(
                rule=rule,
                target=target,
                opened_at=now,
                value=value,
                last_value=value,
                message=message[:300],
            )
    except IntegrityError:
        return None  # another worker opened it a moment ago (one open event per rule/target)


def event_payload(event: AlertEvent, transition: str) -> dict[str, Any]:
    """Return the JSON a webhook receives for an event transition."""
    rule, target = event.rule, event.target
    return {
        "type": f"alert.{transition}",
        "event_id": event.pk,
        "message": event.message,
        "opened_at": event.opened_at.isoformat(),
        "resolved_at": event.resolved_at.isoformat() if event.resolved_at else None,
        "value": event.value,
        "last_value": event.last_value,
        "rule": {
            "id": rule.pk,
            "name": rule.name,
            "series": rule.series,
            "comparison": rule.comparison,
            "threshold": rule.threshold,
            "duration_s": rule.duration_s,
        },
        "target": {"id": target.pk, "name": target.name, "kind": target.kind},
    }
