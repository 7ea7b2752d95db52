"""A target's alert rules: its defaults (the TTFT one set by its decision), and the users' rules."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import transaction

from monitoring.models import AlertRule, Comparison, Target
from monitoring.services.url_guard import validate_monitored_url
from monitoring.targets import kinds
from monitoring.targets.kinds import RuleContext, RuleSpec
from planner.decisions.selectors import latency_slo


def ttft_rule_sync(*, target: Target) -> None:
    """Set the default TTFT p95 rule's threshold from the linked decision (or the default)."""
    ttft = decision_ttft_threshold_s(target) or settings.MONITORING_DEFAULT_TTFT_P95_THRESHOLD_S
    AlertRule.objects.filter(target=target, is_default=True, series="vllm.ttft_seconds.p95").update(
        threshold=ttft, name=f"TTFT p95 above {ttft:g} s"
    )


# --- alert rules ----------------------------------------------------------------------------


def decision_ttft_threshold_s(target: Target) -> float | None:
    """Return the TTFT p95 threshold of the target's decision record, in seconds, if any."""
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
