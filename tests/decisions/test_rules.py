"""Acceptance rules, status transitions and superseding."""

import pytest

from planner.decisions import services
from planner.decisions.models import DecisionRecord, DecisionRevision, Status
from planner.decisions.rules import readiness
from tests.decisions.conftest import PASSING, THRESHOLDS, complete_decision, make_decision


def test_an_empty_record_is_refused_with_everything_missing(planner):
    decision = make_decision(planner)

    with pytest.raises(services.AcceptanceRefused) as refused:
        services.decision_accept(decision=decision, actor=planner)

    missing = refused.value.messages
    assert len([m for m in missing if "has no owner" in m]) == 5
    assert len([m for m in missing if "has no mechanism" in m]) == 5
    assert len([m for m in missing if "has no threshold" in m]) == 6
    assert "The verifiable sentence is missing." in missing
    decision.refresh_from_db()
    assert decision.status == Status.PROPOSED


def test_one_missing_owner_is_named(planner):
    decision = complete_decision(planner, measured=PASSING)
    services.decision_update(
        decision=decision,
        actor=planner,
        expected_version=decision.version,
        responsibilities={"recovery": {"owner": " "}},
    )

    with pytest.raises(services.AcceptanceRefused) as refused:
        services.decision_accept(decision=decision, actor=planner)

    assert refused.value.messages == ["“How traffic comes back after a failure” has no owner."]


def test_complete_and_passing_record_is_accepted_without_the_flag(planner):
    decision = complete_decision(planner, measured=PASSING)

    accepted = services.decision_accept(decision=decision, actor=planner)

    assert accepted.status == Status.ACCEPTED
    assert accepted.accepted_with_open_evidence is False
    assert accepted.decided_by == planner
    assert accepted.decided_at is not None


def test_missing_or_failing_measurements_need_the_explicit_flag(planner):
    failing = {**PASSING, "ttft_p95": 950.0}
    del failing["drill_recovery"]
    decision = complete_decision(planner, measured=failing)

    with pytest.raises(services.AcceptanceRefused) as refused:
        services.decision_accept(decision=decision, actor=planner)
    messages = " ".join(refused.value.messages)
    assert "Time to first token, p95” fails: measured 950 ms, threshold ≤ 800" in messages
    assert "time from a worker failure to the next successful request” has no measurement" in (
        messages
    )

    accepted = services.decision_accept(decision=decision, actor=planner, with_open_evidence=True)
    assert accepted.status == Status.ACCEPTED
    assert accepted.accepted_with_open_evidence is True


def test_the_open_evidence_flag_stays_after_the_evidence_passes(planner):
    decision = complete_decision(planner, measured={**PASSING, "ttft_p95": 950.0})
    services.decision_accept(decision=decision, actor=planner, with_open_evidence=True)

    decision.refresh_from_db()
    services.record_evidence_measurement(
        decision=decision, item_kind="ttft_p95", value=0.3, unit="s", source="typed", actor=planner
    )

    decision.refresh_from_db()
    assert decision.accepted_with_open_evidence is True
    assert readiness(decision).open_evidence == []


def test_thresholds_without_measurements_are_open_not_blocking(planner):
    decision = complete_decision(planner)

    state = readiness(decision)

    assert state.blocking == []
    assert len(state.open_evidence) == len(THRESHOLDS)


def test_an_accepted_record_must_stay_complete(planner):
    decision = complete_decision(planner, measured=PASSING)
    services.decision_accept(decision=decision, actor=planner)
    decision.refresh_from_db()

    with pytest.raises(services.AcceptanceRefused):
        services.decision_update(
            decision=decision,
            actor=planner,
            expected_version=decision.version,
            verifiable_sentence="",
        )

    decision.refresh_from_db()
    assert decision.verifiable_sentence


def test_reject_only_from_proposed(planner):
    decision = make_decision(planner)
    services.decision_reject(decision=decision, actor=planner)

    with pytest.raises(services.InvalidTransition):
        services.decision_accept(decision=decision, actor=planner)
    decision.refresh_from_db()
    assert decision.status == Status.REJECTED


def test_superseding_links_both_ways_and_freezes_the_old_record(planner):
    old = complete_decision(planner, measured=PASSING)
    services.decision_accept(decision=old, actor=planner)
    new = services.decision_draft_successor(decision=old, actor=planner)

    services.decision_supersede(decision=old, superseded_by=new, actor=planner)

    old.refresh_from_db()
    assert old.status == Status.SUPERSEDED
    assert old.superseded_by == new
    assert list(new.supersedes.all()) == [old]
    assert new.revisions.first().action == "supersedes"
    assert new.revisions.order_by("-number").first().snapshot["supersedes"] == [old.label]
    with pytest.raises(services.DecisionReadOnly):
        services.decision_update(
            decision=old, actor=planner, expected_version=old.version, title="Sneaky edit"
        )
    with pytest.raises(services.DecisionReadOnly):
        services.record_evidence_measurement(
            decision=old, item_kind="ttft_p95", value=1, unit="ms", source="typed"
        )
    assert DecisionRecord.objects.get(pk=old.pk).title != "Sneaky edit"


def test_only_accepted_records_are_superseded_and_never_by_themselves(planner):
    proposed = make_decision(planner)
    other = make_decision(planner)
    with pytest.raises(services.InvalidTransition):
        services.decision_supersede(decision=proposed, superseded_by=other, actor=planner)

    accepted = complete_decision(planner, measured=PASSING)
    services.decision_accept(decision=accepted, actor=planner)
    with pytest.raises(services.InvalidTransition):
        services.decision_supersede(decision=accepted, superseded_by=accepted, actor=planner)


def test_record_evidence_measurement_from_monitoring_converts_units_and_needs_a_window(planner):
    from datetime import UTC, datetime

    from django.core.exceptions import ValidationError

    decision = complete_decision(planner)
    with pytest.raises(ValidationError):
        services.record_evidence_measurement(
            decision=decision, item_kind="ttft_p95", value=0.31, unit="s", source="monitoring"
        )

    start = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
    end = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    item = services.record_evidence_measurement(
        decision=decision,
        item_kind="completion_rate",
        value=0.998,
        unit="ratio",
        source="monitoring",
        window_start=start,
        window_end=end,
        note="vllm-a, vllm-b",
        actor=None,
    )

    assert item.measured_value == pytest.approx(99.8)
    assert item.passed is True
    revision = decision.revisions.order_by("-number").first()
    assert revision.action == "evidence"
    assert revision.author is None
    assert revision.author_label == "monitoring"
    assert revision.changed_fields == [
        "evidence.completion_rate.measured_value",
        "evidence.completion_rate.source",
        "evidence.completion_rate.window_start",
        "evidence.completion_rate.window_end",
        "evidence.completion_rate.note",
    ]


def test_revisions_cannot_be_changed_or_deleted(planner):
    from planner.decisions.models import RevisionIsPermanent

    decision = make_decision(planner)
    revision = DecisionRevision.objects.get(decision=decision)

    revision.action = "edited"
    with pytest.raises(RevisionIsPermanent):
        revision.save()
    with pytest.raises(RevisionIsPermanent):
        revision.delete()


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e308 * 10, -1.0])
def test_non_finite_or_negative_values_are_refused(planner, value):
    from django.core.exceptions import ValidationError

    decision = make_decision(planner)

    with pytest.raises(ValidationError):
        services.decision_update(
            decision=decision,
            actor=planner,
            expected_version=1,
            evidence={"ttft_p95": {"threshold": value}},
        )
    with pytest.raises(ValidationError):
        services.record_evidence_measurement(
            decision=decision, item_kind="ttft_p95", value=value, unit="ms", source="typed"
        )


def test_an_overflowing_unit_conversion_is_refused(planner):
    from django.core.exceptions import ValidationError

    decision = make_decision(planner)

    with pytest.raises(ValidationError):
        services.record_evidence_measurement(
            decision=decision, item_kind="ttft_p95", value=1e307, unit="s", source="typed"
        )
