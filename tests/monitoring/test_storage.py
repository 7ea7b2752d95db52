"""Polls store samples idempotently, keep the raw snapshot, and record failures on the target."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitoring.models import PollStatus, Sample, TargetSnapshot
from monitoring.scrape import from_text
from monitoring.services import PollOutcome, poll_record_failure, poll_record_success
from tests.monitoring.conftest import FIXTURES

pytestmark = pytest.mark.django_db

IDLE = (FIXTURES / "vllm" / "v0_32_metrics_idle.txt").read_text()
AFTER = (FIXTURES / "vllm" / "v0_32_metrics_after.txt").read_text()
T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def outcome(text: str, ts: datetime, previous=None) -> PollOutcome:
    result = from_text(text, "vllm", previous=previous, ts=ts.timestamp())
    return PollOutcome(samples=result.samples, snapshot=result.raw.to_json(), info=result.info)


def test_a_poll_stores_its_samples_and_the_raw_snapshot(make_target):
    target = make_target()

    stored = poll_record_success(target=target, ts=T0, outcome=outcome(IDLE, T0), slot=1)

    assert stored == Sample.objects.filter(target=target).count() > 0
    assert Sample.objects.filter(target=target, series="vllm.requests_running").exists()
    assert TargetSnapshot.objects.get(target=target).data["kind"] == "vllm"
    target.refresh_from_db()
    assert target.last_status == PollStatus.OK
    assert target.latest["poll.up"] == 1.0


def test_a_redelivered_poll_of_the_same_slot_writes_nothing_twice(make_target):
    target = make_target()
    poll_record_success(target=target, ts=T0, outcome=outcome(IDLE, T0), slot=7)
    count = Sample.objects.count()

    again = poll_record_success(
        target=target, ts=T0 + timedelta(seconds=1), outcome=outcome(IDLE, T0), slot=7
    )

    assert again == 0
    assert Sample.objects.count() == count


def test_the_same_samples_inserted_twice_are_stored_once(make_target):
    target = make_target()
    poll_record_success(target=target, ts=T0, outcome=outcome(IDLE, T0))
    count = Sample.objects.count()

    poll_record_success(target=target, ts=T0, outcome=outcome(IDLE, T0))

    assert Sample.objects.count() == count


def test_rates_are_derived_from_the_previous_snapshot(make_target):
    target = make_target()
    first = outcome(IDLE, T0)
    poll_record_success(target=target, ts=T0, outcome=first)
    later = T0 + timedelta(seconds=15)

    poll_record_success(target=target, ts=later, outcome=outcome(AFTER, later, first.snapshot))

    rate = Sample.objects.get(target=target, series="vllm.prompt_tokens_per_s", ts=later)
    assert rate.value == pytest.approx(249.0 / 15)


def test_a_failed_poll_stores_the_error_and_keeps_every_earlier_sample(make_target):
    target = make_target()
    poll_record_success(target=target, ts=T0, outcome=outcome(IDLE, T0))
    before = set(Sample.objects.values_list("pk", flat=True))
    failed_at = T0 + timedelta(seconds=15)

    poll_record_failure(
        target=target, ts=failed_at, error_kind="connect", message="connection refused"
    )

    target.refresh_from_db()
    assert target.last_status == PollStatus.ERROR
    assert (target.last_error_kind, target.last_error) == ("connect", "connection refused")
    assert target.last_error_at == failed_at
    assert target.last_success_at == T0
    assert target.consecutive_failures == 1
    assert before <= set(Sample.objects.values_list("pk", flat=True))
    assert Sample.objects.get(target=target, series="poll.up", ts=failed_at).value == 0.0
