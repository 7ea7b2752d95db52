"""Celery tasks: pinned names, scheduler fan-out with expires, retry policy, alert hand-off."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.utils import timezone

from config.celery import app
from monitoring import pacing, tasks
from monitoring.models import PollStatus, Target

pytestmark = pytest.mark.django_db


def test_task_names_are_pinned():
    # Renaming a task strands messages already queued and beat entries in the database.
    assert tasks.schedule_polls.name == "monitoring.schedule_polls"
    assert tasks.poll_target.name == "monitoring.poll_target"
    assert tasks.maintain.name == "monitoring.maintain"
    assert tasks.deliver_webhook.name == "monitoring.deliver_webhook"
    assert tasks.forget_series.name == "monitoring.forget_series"


def test_beat_runs_the_scheduler_every_5_s_and_maintenance_every_minute():
    schedule = app.conf.beat_schedule
    assert schedule["monitoring.schedule_polls"]["task"] == "monitoring.schedule_polls"
    assert schedule["monitoring.schedule_polls"]["schedule"] == 5.0 == tasks.SCHEDULER_INTERVAL_S
    assert schedule["monitoring.schedule_polls"]["options"]["expires"] < 5
    # django-celery-beat's DatabaseScheduler (the default here) reads `expire_seconds` only.
    assert schedule["monitoring.schedule_polls"]["options"]["expire_seconds"] < 5
    assert schedule["monitoring.maintain"]["task"] == "monitoring.maintain"


# django-celery-beat's scheduler closes the database connection it used; inside a test
# transaction that connection could not be reopened, so this test commits for real.
@pytest.mark.django_db(transaction=True)
def test_the_database_scheduler_keeps_the_expiry_of_scheduler_ticks():
    from django_celery_beat.models import PeriodicTask
    from django_celery_beat.schedulers import DatabaseScheduler

    DatabaseScheduler(app=app, lazy=True).update_from_dict(
        {"monitoring.schedule_polls": app.conf.beat_schedule["monitoring.schedule_polls"]}
    )

    assert PeriodicTask.objects.get(name="monitoring.schedule_polls").expire_seconds == 4


def test_poll_policy_is_acks_late_with_a_soft_time_limit():
    assert tasks.poll_target.acks_late is True
    assert tasks.poll_target.soft_time_limit == tasks.POLL_SOFT_TIME_LIMIT_S
    assert tasks.poll_target.ignore_result is True


def test_scheduler_fans_out_one_poll_per_due_target_with_expires_shorter_than_its_interval(
    make_target,
):
    due_15 = make_target(poll_interval_s=15)
    due_5 = make_target(poll_interval_s=5)
    make_target(enabled=False)
    later = make_target()
    Target.objects.filter(pk=later.pk).update(next_poll_at=timezone.now() + timedelta(minutes=1))

    with mock.patch.object(tasks.poll_target, "apply_async") as apply_async:
        queued = tasks.schedule_polls()

    assert queued == 2
    calls = {c.kwargs["kwargs"]["target_id"]: c.kwargs for c in apply_async.call_args_list}
    assert set(calls) == {due_15.pk, due_5.pk}
    # A new target waits for its phase (less than one interval), then stays valid under one.
    assert 0 <= calls[due_15.pk]["countdown"] < 15
    assert 0 < calls[due_15.pk]["expires"] - calls[due_15.pk]["countdown"] < 15
    assert 0 <= calls[due_5.pk]["countdown"] < 5
    assert 0 < calls[due_5.pk]["expires"] - calls[due_5.pk]["countdown"] < 5
    assert all(isinstance(c["kwargs"]["slot"], int) for c in calls.values())


def test_a_target_due_before_the_next_tick_is_queued_now_with_a_countdown(make_target):
    target = make_target(poll_interval_s=5)
    # Due at one of its grid seconds (monitoring.pacing), 3 s after the tick.
    slot = pacing.slot_at_or_after(time.time() + 60, 5, pacing.phase_s(target.pk, 5))
    due = datetime.fromtimestamp(slot, tz=UTC)
    Target.objects.filter(pk=target.pk).update(next_poll_at=due)

    with (
        mock.patch.object(tasks.poll_target, "apply_async") as apply_async,
        mock.patch.object(timezone, "now", return_value=due - timedelta(seconds=3)),
    ):
        tasks.schedule_polls()

    (call,) = apply_async.call_args_list
    assert call.kwargs["countdown"] == 3.0
    assert call.kwargs["countdown"] < call.kwargs["expires"] < call.kwargs["countdown"] + 5
    target.refresh_from_db()
    assert target.next_poll_at == due + timedelta(seconds=5)  # the cadence does not drift


def test_a_scheduled_target_is_not_queued_again_before_its_interval(make_target):
    make_target(poll_interval_s=15)

    with mock.patch.object(tasks.poll_target, "apply_async") as apply_async:
        first = tasks.schedule_polls()
        second = tasks.schedule_polls()

    assert (first, second) == (1, 0)
    assert apply_async.call_count == 1


def test_a_worker_that_fell_behind_queues_one_poll_not_a_backlog(make_target):
    target = make_target(poll_interval_s=5)
    Target.objects.filter(pk=target.pk).update(next_poll_at=timezone.now() - timedelta(hours=1))

    with mock.patch.object(tasks.poll_target, "apply_async") as apply_async:
        tasks.schedule_polls()

    assert apply_async.call_count == 1
    target.refresh_from_db()
    assert target.next_poll_at > timezone.now()


@pytest.mark.enable_socket
def test_a_dead_target_is_retried_within_its_slot_then_counted_once(make_target, settings):
    settings.MONITORING_TOTAL_TIMEOUT_S = 0.5
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = make_target(base_url=f"http://127.0.0.1:{port}", poll_interval_s=60)

    with mock.patch("monitoring.tasks.poll", wraps=tasks.poll) as polled:
        tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": int(time.time())})

    assert polled.call_count == 1 + tasks.MAX_TRANSPORT_RETRIES
    target.refresh_from_db()
    assert target.last_status == PollStatus.ERROR
    assert target.last_error_kind == "connect"
    assert target.consecutive_failures == 1


@pytest.mark.enable_socket
def test_a_poll_already_half_an_interval_late_is_not_retried(make_target, settings):
    """A retry would be stored right beside the next slot's poll: the failure is stored now."""
    settings.MONITORING_TOTAL_TIMEOUT_S = 0.5
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = make_target(base_url=f"http://127.0.0.1:{port}", poll_interval_s=10)

    with mock.patch("monitoring.tasks.poll", wraps=tasks.poll) as polled:
        tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": int(time.time()) - 5})

    assert polled.call_count == 1
    target.refresh_from_db()
    assert target.last_error_kind == "connect"


@pytest.mark.enable_socket
def test_an_http_error_is_not_retried(make_target, http_server):
    base, script = http_server
    script.route = lambda path: (500, {}, [b"boom"])
    target = make_target(base_url=f"{base}/v", poll_interval_s=60)

    with mock.patch("monitoring.tasks.poll", wraps=tasks.poll) as polled:
        tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": 1})

    assert polled.call_count == 1
    target.refresh_from_db()
    assert target.last_error_kind == "http_status"


def test_a_deleted_or_disabled_target_is_skipped(make_target):
    target = make_target(enabled=False)

    with mock.patch("monitoring.tasks.poll") as polled:
        tasks.poll_target.apply(kwargs={"target_id": target.pk})
        tasks.poll_target.apply(kwargs={"target_id": 999_999})

    polled.assert_not_called()


def test_maintenance_rolls_up_then_enforces_retention(make_target):
    with (
        mock.patch("monitoring.tasks.rollup_run", return_value=3) as rollup,
        mock.patch("monitoring.tasks.retention_run") as retention,
    ):
        tasks.maintain.apply()

    rollup.assert_called_once()
    retention.assert_called_once()


@pytest.mark.enable_socket
def test_polls_are_counted_on_serveplans_own_metrics(make_target, http_server, client):
    from prometheus_client.parser import text_string_to_metric_families

    base, script = http_server
    script.route = lambda path: (500, {}, [b"boom"])
    target = make_target(base_url=f"{base}/v", poll_interval_s=60)
    Target.objects.filter(pk=target.pk).update(next_poll_at=timezone.now() - timedelta(seconds=30))

    tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": 1})
    families = {
        f.name: f for f in text_string_to_metric_families(client.get("/metrics").content.decode())
    }

    polls = {
        (s.labels["kind"], s.labels["outcome"]): s.value
        for s in families["serveplan_polls"].samples
    }
    assert polls == {("vllm", "http_status"): 1.0}
    durations = families["serveplan_poll_duration_seconds"].samples
    assert any(s.name.endswith("_count") and s.value == 1.0 for s in durations)
    assert families["serveplan_scheduler_lag_seconds"].samples[0].value >= 0
    assert families["serveplan_alerts_open"].samples[0].value >= 0


def test_queue_length_reads_the_local_broker_folder(tmp_path, monkeypatch):
    from monitoring.ops_gauges import queue_length

    for name in ("1_a.celery.msg", "2_b.celery.msg", "3_c.other.msg"):
        (tmp_path / name).write_text("{}")
    monkeypatch.setattr(app.conf, "broker_url", "filesystem://")
    monkeypatch.setitem(app.conf, "broker_transport_options", {"data_folder_in": str(tmp_path)})

    assert queue_length() == 2
