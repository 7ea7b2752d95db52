"""Evidence fill: asks before replacing values typed by hand, rounds, records window and source."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from monitoring.reality.evidence import evidence_fill, round_measurement
from planner.decisions.services import decision_create, record_evidence_measurement
from tests.monitoring.factories import write_series

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        pytest.param(434.375, "ms", 434.0, id="ms-three-figures"),
        pytest.param(12.3456, "ms", 12.3, id="ms-small"),
        pytest.param(1534.9, "ms", 1530.0, id="ms-large"),
        pytest.param(99.12345, "%", 99.12, id="percent"),
        pytest.param(0.0, "ms", 0.0, id="zero"),
    ],
)
def test_measurements_are_rounded_to_what_they_support(value, unit, expected):
    assert round_measurement(value, unit) == expected


@pytest.fixture
def measured_target(make_target, planner):
    decision = decision_create(actor=planner, title="llama on a800")
    target = make_target(decision=decision)
    start = timezone.now() - timedelta(minutes=30)
    for key, value in (
        ("vllm.ttft_seconds.p95", 0.434375),
        ("vllm.inter_token_latency_seconds.p95", 0.0212345),
        ("vllm.completion_ratio", 0.991234),
        ("vllm.requests_per_s", 2.0),
    ):
        write_series(target, key, start=start, step_s=15, count=100, value=lambda i, v=value: v)
    return target, decision


def _typed(decision, planner, kind, value, unit):
    record_evidence_measurement(
        decision=decision, item_kind=kind, value=value, unit=unit, source="typed", actor=planner
    )


def test_a_typed_value_is_held_back_until_confirmed(measured_target, planner):
    target, decision = measured_target
    _typed(decision, planner, "ttft_p95", 500.0, "ms")
    end = timezone.now()
    start = end - timedelta(hours=1)

    first = evidence_fill(target=target, start=start, end=end, actor=planner)

    items = {i.kind: i for i in decision.evidence_items.all()}
    assert items["ttft_p95"].measured_value == 500.0  # kept
    assert items["ttft_p95"].value_source == "typed"
    assert [h.kind for h in first.held] == ["ttft_p95"]
    assert first.held[0].measured.value == 434.0
    assert {m.kind for m in first.filled} == {"itl_p95", "completion_rate"}
    assert items["itl_p95"].measured_value == 21.2  # rounded
    assert items["completion_rate"].measured_value == 99.12
    assert items["itl_p95"].value_source == "monitoring"
    assert (items["itl_p95"].window_start, items["itl_p95"].window_end) == (start, end)
    assert target.name in items["itl_p95"].note

    evidence_fill(target=target, start=start, end=end, actor=planner, overwrite=["ttft_p95"])

    replaced = decision.evidence_items.get(kind="ttft_p95")
    assert replaced.measured_value == 434.0
    assert replaced.value_source == "monitoring"


def test_the_page_asks_before_overwriting(measured_target, planner, planner_client):
    target, decision = measured_target
    _typed(decision, planner, "ttft_p95", 500.0, "ms")
    url = f"/monitoring/targets/{target.pk}/evidence/"

    page = planner_client.post(url, {"range": "1h"})

    assert page.status_code == 200
    assert b"Replace values typed by hand?" in page.content
    assert b'name="overwrite" value="ttft_p95"' in page.content
    assert decision.evidence_items.get(kind="ttft_p95").measured_value == 500.0
    start = page.context["start"].isoformat()
    end = page.context["end"].isoformat()

    kept = planner_client.post(
        url, {"start": start, "end": end, "confirmed": "1", "kind": ["ttft_p95"]}
    )
    assert kept.status_code == 302
    assert decision.evidence_items.get(kind="ttft_p95").measured_value == 500.0

    replaced = planner_client.post(
        url,
        {
            "start": start,
            "end": end,
            "confirmed": "1",
            "kind": ["ttft_p95"],
            "overwrite": "ttft_p95",
        },
    )
    assert replaced.status_code == 302
    item = decision.evidence_items.get(kind="ttft_p95")
    assert item.measured_value == 434.0
    assert item.window_start.isoformat() == start


@pytest.mark.parametrize(
    ("start", "end"),
    [
        pytest.param("yesterday", "now", id="words"),
        pytest.param("2026-13-45T00:00:00+00:00", "2026-11-28T12:00:00+00:00", id="month-13"),
        pytest.param("2026-11-28T11:00:00", "2026-11-28T12:00:00", id="no-offset"),
        pytest.param("2026-11-28T12:00:00+00:00", "2026-11-28T11:00:00+00:00", id="reversed"),
    ],
)
def test_a_malformed_window_is_refused(measured_target, planner_client, start, end):
    target, decision = measured_target
    response = planner_client.post(
        f"/monitoring/targets/{target.pk}/evidence/", {"start": start, "end": end}, follow=True
    )
    assert response.redirect_chain[0][1] == 302
    assert "The window is not a valid pair of times." in [
        str(m) for m in response.context["messages"]
    ]
    assert decision.evidence_items.get(kind="itl_p95").measured_value is None


@pytest.fixture
def other_model_target(make_target, planner):
    """A server of Qwen2.5-32B linked to a record about Llama-3.1-70B, with a window of data."""
    decision = decision_create(actor=planner, title="llama on a800", model_name="Llama-3.1-70B")
    target = make_target(decision=decision)
    target.info = {"served_models": [{"id": "Qwen/Qwen2.5-32B-Instruct"}]}
    target.save(update_fields=["info"])
    start = timezone.now() - timedelta(minutes=30)
    write_series(
        target, "vllm.ttft_seconds.p95", start=start, step_s=15, count=100, value=lambda i: 0.4
    )
    return target, decision


def test_evidence_from_a_server_of_another_model_is_refused(other_model_target, planner):
    target, decision = other_model_target
    end = timezone.now()

    result = evidence_fill(target=target, start=end - timedelta(hours=1), end=end, actor=planner)

    assert result.filled == ()
    assert "serves Qwen/Qwen2.5-32B-Instruct" in result.refused
    assert "Llama-3.1-70B" in result.refused
    assert decision.evidence_items.get(kind="ttft_p95").measured_value is None


def test_the_page_refuses_then_records_only_on_an_explicit_override(
    other_model_target, planner_client
):
    target, decision = other_model_target
    url = f"/monitoring/targets/{target.pk}/evidence/"

    refused = planner_client.post(url, {"range": "1h"})

    assert refused.status_code == 409
    assert b'data-testid="evidence-refused"' in refused.content
    assert decision.evidence_items.get(kind="ttft_p95").measured_value is None

    start = refused.context["start"].isoformat()
    end = refused.context["end"].isoformat()
    planner_client.post(url, {"start": start, "end": end, "accept_other_model": "1"})

    item = decision.evidence_items.get(kind="ttft_p95")
    assert item.measured_value == 400.0
    assert "Recorded by explicit override although" in item.note
    assert "Qwen/Qwen2.5-32B-Instruct" in item.note
