"""Alert rules: defaults per target, open after the duration, resolve, webhooks as JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError

from monitoring.alerts.evaluate import alerts_evaluate, event_payload
from monitoring.alerts.webhooks import SIGNATURE_HEADER, signature_valid
from monitoring.models import AlertEvent, AlertRule
from monitoring.services import alert_rule_create, alert_rule_webhook_set
from monitoring.tasks import deliver_webhook

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_each_new_vllm_target_gets_the_default_rules(make_target):
    target = make_target(kind="vllm")

    rules = {r.series: r for r in AlertRule.objects.filter(target=target)}

    assert (
        rules["vllm.kv_cache_usage_pct"].threshold,
        rules["vllm.kv_cache_usage_pct"].duration_s,
    ) == (90, 300)
    assert rules["vllm.requests_waiting"].duration_s == 120
    assert rules["vllm.preemptions_per_s"].threshold == 0
    assert "vllm.ttft_seconds.p95" in rules
    assert (
        rules["poll.consecutive_failures"].comparison,
        rules["poll.consecutive_failures"].threshold,
    ) == ("ge", 3)


def test_each_new_ray_target_gets_the_pending_placement_group_rule(make_target):
    target = make_target(kind="ray")

    series = set(AlertRule.objects.filter(target=target).values_list("series", flat=True))

    assert series == {
        'ray.placement_groups{state="PENDING"}',
        "poll.consecutive_failures",
        "ray.cluster.nodes_missing",
    }


def test_an_alert_opens_only_after_its_duration_and_resolves_when_the_condition_stops(
    make_target,
):
    target = make_target()
    high = {"vllm.kv_cache_usage_pct": 95.0}

    assert alerts_evaluate(target=target, values=high, now=at(0)) == []
    assert alerts_evaluate(target=target, values=high, now=at(240)) == []
    opened = alerts_evaluate(target=target, values=high, now=at(300))
    assert [(e.rule.series, what) for e, what in opened] == [("vllm.kv_cache_usage_pct", "opened")]
    assert alerts_evaluate(target=target, values=high, now=at(315)) == []  # still open, once

    resolved = alerts_evaluate(target=target, values={"vllm.kv_cache_usage_pct": 40.0}, now=at(330))

    (event, what) = resolved[0]
    assert what == "resolved"
    event.refresh_from_db()
    assert (event.opened_at, event.resolved_at) == (at(300), at(330))
    assert AlertEvent.objects.filter(resolved_at__isnull=True).count() == 0


def test_a_dip_below_the_threshold_restarts_the_duration(make_target):
    target = make_target()
    alerts_evaluate(target=target, values={"vllm.requests_waiting": 3}, now=at(0))
    alerts_evaluate(target=target, values={"vllm.requests_waiting": 0}, now=at(60))
    alerts_evaluate(target=target, values={"vllm.requests_waiting": 3}, now=at(90))

    assert alerts_evaluate(target=target, values={"vllm.requests_waiting": 3}, now=at(180)) == []
    assert alerts_evaluate(target=target, values={"vllm.requests_waiting": 3}, now=at(210))


def test_target_down_for_three_polls_opens_immediately(make_target):
    target = make_target()
    for n in (1, 2):
        assert not alerts_evaluate(
            target=target, values={"poll.consecutive_failures": n}, now=at(15 * n)
        )

    opened = alerts_evaluate(target=target, values={"poll.consecutive_failures": 3}, now=at(45))

    assert opened[0][0].rule.series == "poll.consecutive_failures"


def test_a_missing_series_is_no_data_and_does_not_breach(make_target):
    target = make_target(kind="ray")

    assert alerts_evaluate(target=target, values={}, now=at(0)) == []
    assert alerts_evaluate(target=target, values={}, now=at(900)) == []


def test_a_rule_for_all_targets_applies_to_each(make_target):
    a, b = make_target(), make_target()
    alert_rule_create(name="Any 5xx", series="vllm.http_errors_per_s", comparison="gt", threshold=0)

    for target in (a, b):
        alerts_evaluate(target=target, values={"vllm.http_errors_per_s": 1.0}, now=at(0))

    assert AlertEvent.objects.filter(rule__name="Any 5xx").count() == 2


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00:ec2::254]/",
        "ftp://hooks.example/",
        "http://user:secret@127.0.0.1/hook",
    ],
    ids=["cloud-metadata", "aws-ipv6-metadata", "not-http", "credentials-in-url"],
)
def test_a_webhook_url_goes_through_the_same_guard_as_targets(url):
    rule = alert_rule_create(name="x", series="poll.up", comparison="lt", threshold=1)

    with pytest.raises(ValidationError) as info:
        alert_rule_webhook_set(rule=rule, url=url)

    assert "webhook_url" in info.value.message_dict
    rule.refresh_from_db()
    assert (rule.webhook_url, rule.webhook_secret) == ("", "")


@pytest.mark.enable_socket
def test_the_webhook_receives_the_event_as_json(make_target, http_server):
    base, script = http_server
    target = make_target()
    rule = alert_rule_create(
        name="waiting",
        target=target,
        series="vllm.requests_waiting",
        comparison="gt",
        threshold=0,
    )
    secret = alert_rule_webhook_set(rule=rule, url=f"{base}/hook")
    transitions = alerts_evaluate(target=target, values={"vllm.requests_waiting": 4}, now=at(0))
    event = next(e for e, _ in transitions if e.rule_id == rule.pk)

    deliver_webhook.apply(kwargs={"event_id": event.pk, "transition": "opened"})

    ((path, headers, body),) = script.posts
    assert path == "/hook"
    assert headers["Content-Type"] == "application/json"
    payload = json.loads(body)
    assert payload == json.loads(json.dumps(event_payload(event, "opened")))
    assert (payload["type"], payload["target"]["name"]) == ("alert.opened", target.name)
    # Signed with the rule's secret: the receiver's check passes, and fails with any other key.
    assert signature_valid(secret, body, headers[SIGNATURE_HEADER])
    assert not signature_valid("another-secret", body, headers[SIGNATURE_HEADER])
    assert not signature_valid(secret, body + b" ", headers[SIGNATURE_HEADER])


@pytest.mark.enable_socket
def test_the_webhook_answer_body_is_never_read(make_target, http_server):
    """Only the status matters: a receiver answering 64 MiB costs the worker nothing."""
    base, script = http_server
    sent = []

    def huge():
        for _ in range(64):
            sent.append(1)
            yield b"x" * 2**20

    script.post_route = lambda path: (200, {"Content-Length": str(64 * 2**20)}, huge())
    rule = alert_rule_create(name="w", target=make_target(), series="poll.up", threshold=0)
    alert_rule_webhook_set(rule=rule, url=f"{base}/hook")
    (event, _), *_ = alerts_evaluate(target=rule.target, values={"poll.up": 1}, now=at(0))

    deliver_webhook.apply(kwargs={"event_id": event.pk, "transition": "opened"})

    assert len(script.posts) == 1
    assert len(sent) < 64  # the worker hung up after the status line


def test_the_webhook_secret_is_encrypted_at_rest_and_renewed_with_the_url(make_target):
    from django.db import connection

    rule = alert_rule_create(name="w", target=make_target(), series="poll.up", threshold=0)
    first = alert_rule_webhook_set(rule=rule, url="http://127.0.0.1:9/hook")
    second = alert_rule_webhook_set(rule=rule, url="http://127.0.0.1:9/hook")

    with connection.cursor() as cursor:
        cursor.execute("SELECT webhook_secret FROM monitoring_alertrule WHERE id = %s", [rule.pk])
        stored = cursor.fetchone()[0]
    assert first != second
    assert len(second) >= 32
    assert second not in stored
    assert AlertRule.objects.get(pk=rule.pk).webhook_secret == second
    assert alert_rule_webhook_set(rule=rule, url="") == ""


@pytest.mark.enable_socket
def test_a_third_failed_poll_opens_the_down_alert_and_queues_its_webhook(
    make_target, django_capture_on_commit_callbacks
):
    import socket
    from unittest import mock

    from monitoring import tasks
    from monitoring.models import Target

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = make_target(base_url=f"http://127.0.0.1:{port}")
    Target.objects.filter(pk=target.pk).update(consecutive_failures=2)

    with (
        mock.patch.object(tasks.deliver_webhook, "delay") as delay,
        django_capture_on_commit_callbacks(execute=True),
    ):
        tasks.poll_target.apply(kwargs={"target_id": target.pk})

    event = AlertEvent.objects.get(target=target)
    assert event.rule.series == "poll.consecutive_failures"
    assert event.value == 3
    delay.assert_called_once_with(event_id=event.pk, transition="opened")
