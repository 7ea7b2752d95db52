"""Plan vs reality for a target linked to a saved plan; decision evidence filled from a window."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from monitoring.models import AlertRule
from monitoring.services import target_update
from planner.decisions.services import decision_create
from tests.monitoring.factories import write_series

pytestmark = pytest.mark.django_db


def test_the_ttft_rule_follows_the_linked_decisions_threshold(make_target, planner):
    decision = decision_create(
        actor=planner, title="llama on a800", evidence={"ttft_p95": {"threshold": 800}}
    )
    target = make_target()

    target_update(target=target, decision=decision)

    rule = AlertRule.objects.get(target=target, series="vllm.ttft_seconds.p95")
    assert rule.threshold == pytest.approx(0.8)


def test_one_click_fills_the_decision_evidence_from_a_window(make_target, planner, planner_client):
    decision = decision_create(actor=planner, title="qwen on a100")
    target = make_target(decision=decision)
    now = timezone.now()
    start = now - timedelta(minutes=30)
    write_series(
        target,
        "vllm.ttft_seconds.p95",
        start=start,
        step_s=15,
        count=100,
        value=lambda i: 0.1 + i / 1000,
    )
    write_series(
        target,
        "vllm.inter_token_latency_seconds.p95",
        start=start,
        step_s=15,
        count=100,
        value=lambda i: 0.02,
    )
    write_series(
        target, "vllm.completion_ratio", start=start, step_s=15, count=100, value=lambda i: 0.99
    )
    write_series(
        target, "vllm.requests_per_s", start=start, step_s=15, count=100, value=lambda i: 2.0
    )

    response = planner_client.post(f"/monitoring/targets/{target.pk}/evidence/", {"range": "1h"})

    assert response.status_code == 302
    items = {i.kind: i for i in decision.evidence_items.all()}
    # nearest rank: the 95th of 100 values, 194.0 ms
    assert items["ttft_p95"].measured_value == pytest.approx(194.0)
    assert items["ttft_p95"].value_source == "monitoring"
    assert items["ttft_p95"].window_start is not None
    assert items["itl_p95"].measured_value == pytest.approx(20.0)
    assert items["completion_rate"].measured_value == pytest.approx(99.0)


def test_filling_evidence_needs_the_planner_role(make_target, planner, viewer_client):
    target = make_target(decision=decision_create(actor=planner, title="x"))

    assert viewer_client.post(f"/monitoring/targets/{target.pk}/evidence/").status_code == 403
