"""Issue 15, item 3: expensive targets are paced, missed polls and lag are measured from polls
that finished, and gaps stay visible (charts break, no rate averaged over an outage)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.utils import timezone

from monitoring import pacing, selectors, tasks
from monitoring.models import Sample, Target, TargetSnapshot
from monitoring.polling.run import PollReport, poll, previous_snapshot
from monitoring.scrape.series import make_sample
from monitoring.services import (
    PollOutcome,
    poll_record_failure,
    poll_record_success,
    schedule_due_targets,
    target_update,
)
from monitoring.stores.embedded import queries
from tests.monitoring.scrape.conftest import fixture_text

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("kind", "failures", "factor"),
    [
        ("timeout", 0, 1),
        ("timeout", 1, 2),
        ("timeout", 2, 4),
        ("timeout", 3, 4),
        ("limit", 9, 4),
        ("too_large", 1, 2),
        ("connect", 9, 1),  # refused is cheap: keep the interval, the alert needs the polls
        ("dns", 5, 1),
    ],
)
def test_only_expensive_failures_back_off(kind, failures, factor):
    assert pacing.backoff_factor(kind, failures) == factor


@pytest.mark.parametrize(
    ("gap_s", "interval_s", "factor", "missed"),
    [
        (15, 15, 1, 0),
        (22, 15, 1, 0),
        (30, 15, 1, 1),
        (240, 15, 1, 15),
        (60, 15, 4, 0),
        (105, 15, 4, 3),
    ],
)
def test_missed_polls_are_the_gap_in_intervals_minus_the_expected_one(
    gap_s, interval_s, factor, missed
):
    assert pacing.missed_polls(gap_s, interval_s, factor) == missed


def test_a_target_timing_out_is_polled_every_2_then_4_intervals(make_target):
    target = make_target(poll_interval_s=10)
    now = timezone.now()
    # The poll ran in its grid slot (monitoring.pacing), the last one before now.
    slot = pacing.slot_at_or_after(now.timestamp() - 9.5, 10, pacing.phase_s(target.pk, 10))
    waits_s = []
    for _ in range(4):  # each poll runs 3 s into its slot and times out
        ts = datetime.fromtimestamp(slot + 3, tz=UTC)
        poll_record_failure(target=target, ts=ts, error_kind="timeout", message="t", slot=slot)
        target.refresh_from_db()
        waits_s.append(target.next_poll_at.timestamp() - slot)
        slot = int(target.next_poll_at.timestamp())

    assert waits_s == [20, 40, 40, 40]
    due = schedule_due_targets(now=target.next_poll_at + timedelta(seconds=1))
    target.refresh_from_db()
    assert [d[0] for d in due] == [target.pk]
    assert target.next_poll_at.timestamp() - slot == 40  # the backoff keeps the grid


def test_a_poll_after_a_stall_counts_the_polls_that_never_ran(make_target):
    target = make_target(poll_interval_s=15)
    t0 = timezone.now() - timedelta(minutes=5)
    outcome = PollOutcome(samples=[make_sample("vllm.requests_running", 1.0)])
    poll_record_success(target=target, ts=t0, outcome=outcome)
    poll_record_success(target=target, ts=t0 + timedelta(seconds=15), outcome=outcome)
    poll_record_success(target=target, ts=t0 + timedelta(seconds=255), outcome=outcome)  # 4 min

    target.refresh_from_db()
    assert target.missed_polls == 15
    assert Sample.objects.get(target=target, series="poll.missed").value == 15


@pytest.mark.parametrize(
    "change", [{"poll_interval_s": 30}, {"enabled": False}], ids=["new-interval", "re-enabled"]
)
def test_a_schedule_the_user_restarted_misses_no_poll(make_target, change):
    target = make_target(poll_interval_s=15)
    t0 = timezone.now() - timedelta(minutes=5)
    outcome = PollOutcome(samples=[make_sample("vllm.requests_running", 1.0)])
    poll_record_success(target=target, ts=t0, outcome=outcome)
    target = target_update(target=Target.objects.get(pk=target.pk), **change)
    if change == {"enabled": False}:
        target = target_update(target=target, enabled=True)  # re-enabled 5 minutes later

    poll_record_success(target=target, ts=timezone.now(), outcome=outcome)
    poll_record_success(target=target, ts=timezone.now() + timedelta(minutes=4), outcome=outcome)

    target.refresh_from_db()
    stall = 240 // target.poll_interval_s - 1  # a stall after the restart still counts
    assert target.missed_polls == stall
    assert list(
        Sample.objects.filter(target=target, series="poll.missed").values_list("value", flat=True)
    ) == [stall]


def test_scheduler_lag_is_measured_from_finished_polls_not_from_the_queue(make_target, client):
    from core.tasks import heartbeat

    heartbeat()
    starved = make_target(name="starved", poll_interval_s=15)
    fresh = make_target(name="fresh", poll_interval_s=15)
    now = timezone.now()
    # The scheduler kept queueing (next_poll_at in the future) but no poll of `starved` ran.
    Target.objects.filter(pk=starved.pk).update(
        last_poll_at=now - timedelta(minutes=4), next_poll_at=now + timedelta(seconds=10)
    )
    Target.objects.filter(pk=fresh.pk).update(last_poll_at=now, next_poll_at=now)

    health = selectors.polling_health(now=now)
    body = client.get("/healthz").json()

    assert health.most_late == "starved"
    assert 220 <= health.lag_s <= 230
    assert health.late_targets == 1
    assert health.degraded
    assert body["status"] == "degraded"
    assert "starved" in body["degraded"][0]


def test_ops_metrics_report_the_true_lag(make_target):
    from monitoring.ops_gauges import collect

    target = make_target(poll_interval_s=15)
    Target.objects.filter(pk=target.pk).update(
        last_poll_at=timezone.now() - timedelta(seconds=75),
        next_poll_at=timezone.now() + timedelta(seconds=5),
    )

    gauges = {m.name: m.samples[0].value for m in collect() if m.samples}

    assert 55 <= gauges["serveplan_scheduler_lag_seconds"] <= 65
    assert gauges["serveplan_targets_late"] == 1


def test_the_fleet_overview_says_polls_are_late(make_target, planner_client):
    target = make_target(name="behind", poll_interval_s=15)
    Target.objects.filter(pk=target.pk).update(last_poll_at=timezone.now() - timedelta(minutes=3))

    page = planner_client.get("/monitoring/overview/tiles/").content.decode()
    api = planner_client.get("/api/v1/monitoring/overview/").json()

    assert "Polls are late" in page
    assert api["polling"]["late_targets"] == 1
    assert api["polling"]["most_late"] == "behind"


def test_no_rate_is_averaged_over_a_gap(make_target):
    target = make_target(poll_interval_s=15)
    now = timezone.now()
    TargetSnapshot.objects.create(
        target=target, taken_at=now - timedelta(seconds=16), data={"x": 1}
    )
    assert previous_snapshot(target, now=now) == {"x": 1}

    TargetSnapshot.objects.filter(target=target).update(taken_at=now - timedelta(minutes=4))
    assert previous_snapshot(target, now=now) is None


@pytest.mark.enable_socket
def test_the_first_poll_after_an_outage_stores_gauges_but_no_rate(make_target, http_server):
    base, script = http_server
    pages = iter(["after", "later"])

    def route(path: str):
        if not path.startswith("/metrics"):
            return 404, {}, [b""]
        return (
            200,
            {"Content-Type": "text/plain"},
            [fixture_text("vllm", f"v0_32_metrics_{next(pages)}.txt").encode()],
        )

    script.route = route
    target = make_target(base_url=base, poll_interval_s=15)
    poll(target)
    TargetSnapshot.objects.filter(target=target).update(
        taken_at=timezone.now() - timedelta(minutes=4)
    )
    target.refresh_from_db()

    report = poll(target)

    assert report.ok
    assert "vllm.requests_running" in report.values
    assert not any(key.endswith("_per_s") for key in report.values)


def test_charts_break_their_lines_where_polls_are_missing(make_target):
    from tests.monitoring.factories import write_series

    target = make_target(poll_interval_s=15)
    start = timezone.now() - timedelta(minutes=30)
    write_series(target, "vllm.requests_running", start=start, step_s=15, count=20)
    write_series(
        target, "vllm.requests_running", start=start + timedelta(minutes=15), step_s=15, count=20
    )

    data = queries.series_query(
        target_ids=[target.pk],
        requests=selectors.parse_series_requests(["vllm.requests_running"]),
        start=start,
        end=timezone.now(),
    )

    values = data["series"][0]["v"]
    assert values.count(None) == 1
    gap = values.index(None)
    assert values[gap - 1] is not None
    assert values[gap + 1] is not None
    assert len(values) == 41


def test_polls_get_time_limits_from_their_budget_and_timeouts_are_not_retried(make_target):
    make_target(poll_interval_s=5)
    with mock.patch.object(tasks.poll_target, "apply_async") as apply_async:
        tasks.schedule_polls()
    options = apply_async.call_args.kwargs

    assert options["soft_time_limit"] == pytest.approx(4 + tasks.POLL_STORAGE_MARGIN_S)
    assert options["time_limit"] > options["soft_time_limit"]
    timed_out = PollReport(target_id=1, ok=False, stored=False, ts=timezone.now(), values={},
                           error_kind="timeout")  # fmt: skip
    assert not timed_out.transport_error


def test_suspect_targets_share_one_slot_and_healthy_ones_never_wait(make_target):
    from monitoring.polling.pool import poll_slot

    healthy = make_target(name="healthy")
    hung = [make_target(name=f"hung-{i}") for i in range(3)]
    for target in hung:
        poll_record_failure(target=target, ts=timezone.now(), error_kind="timeout", message="t")

    with (
        poll_slot(hung[0], hold_s=10) as first,
        poll_slot(hung[1], hold_s=10) as second,
        poll_slot(healthy, hold_s=10) as healthy_granted,
    ):
        assert (first, second, healthy_granted) == (True, False, True)
    with poll_slot(hung[2], hold_s=10) as third:  # the slot is free again
        assert third


def test_a_suspect_poll_without_a_slot_is_skipped_not_recorded(make_target):
    from django.core.cache import cache

    target = make_target(poll_interval_s=5)
    poll_record_failure(target=target, ts=timezone.now(), error_kind="timeout", message="t")
    cache.add("monitoring:suspect-poll-slot:0", -1, timeout=30)  # another suspect polls

    with mock.patch.object(tasks, "poll") as polled:
        tasks.poll_target.apply(kwargs={"target_id": target.pk})

    polled.assert_not_called()
    target.refresh_from_db()
    assert target.consecutive_failures == 1


def test_a_target_whose_polls_stopped_opens_an_alert_and_its_next_poll_resolves_it(
    make_target, django_capture_on_commit_callbacks
):
    from monitoring.alerts.evaluate import alerts_evaluate
    from monitoring.models import AlertEvent, AlertRule

    target = make_target(name="starved", poll_interval_s=15)
    other_rule = AlertRule.objects.get(target=target, series="vllm.requests_waiting")
    other = AlertEvent.objects.create(
        rule=other_rule, target=target, opened_at=timezone.now(), value=3, last_value=3, message="m"
    )
    Target.objects.filter(pk=target.pk).update(
        last_poll_at=timezone.now() - timedelta(minutes=4),
        last_status="ok",
        next_poll_at=timezone.now() + timedelta(seconds=10),  # queued, but nothing runs
    )

    with (
        mock.patch.object(tasks.poll_target, "apply_async"),
        mock.patch.object(tasks.deliver_webhook, "delay") as webhook,
        django_capture_on_commit_callbacks(execute=True),
    ):
        tasks.schedule_polls()

    stopped = AlertEvent.objects.get(target=target, rule__series="poll.overdue_intervals")
    assert stopped.is_open
    assert stopped.rule.target is None  # the fleet-wide rule
    assert stopped.value >= 14
    webhook.assert_called_once_with(event_id=stopped.pk, transition="opened")
    other.refresh_from_db()
    assert other.is_open  # the scheduler's evaluation touches no other rule

    target.refresh_from_db()
    alerts_evaluate(target=target, values={"poll.overdue_intervals": 0.0}, now=timezone.now())
    stopped.refresh_from_db()
    assert not stopped.is_open


@pytest.mark.parametrize("value", [0, 1_000_001, -5], ids=["zero", "over-max", "negative"])
def test_a_target_sample_limit_out_of_range_is_a_400_naming_it(planner_api, value):
    response = planner_api.post(
        "/api/v1/monitoring/targets/",
        {"name": "t", "kind": "vllm", "base_url": "http://127.0.0.1:9", "sample_limit": value},
        format="json",
    )

    assert response.status_code == 400
    assert "sample_limit" in response.json()


@pytest.mark.enable_socket
def test_a_target_own_sample_limit_applies_to_its_polls(make_target, http_server):
    base, script = http_server
    page = fixture_text("vllm", "v0_32_metrics_after.txt").encode()
    script.route = lambda path: (200, {"Content-Type": "text/plain"}, [page])
    tight = make_target(name="tight", base_url=base, sample_limit=10)
    default = make_target(name="default", base_url=base)

    assert poll(tight).error_kind == "limit"
    assert poll(default).ok
