"""Bearer tokens: encrypted at rest, sent only to the target, never shown again or logged."""

from __future__ import annotations

import logging

import pytest
from django.db import connection

from monitoring.models import Target
from monitoring.polling.run import poll

pytestmark = pytest.mark.django_db

SECRET = "sk-live-abcdef0123456789"


def _raw_token(target: Target) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT token FROM monitoring_target WHERE id = %s", [target.pk])
        return cursor.fetchone()[0]


def test_the_token_is_encrypted_at_rest(make_target):
    target = make_target(token=SECRET)

    stored = _raw_token(target)

    assert stored
    assert SECRET not in stored
    assert Target.objects.get(pk=target.pk).token == SECRET


def test_the_api_never_returns_the_token(make_target, planner_api):
    target = make_target(token=SECRET)

    detail = planner_api.get(f"/api/v1/monitoring/targets/{target.pk}/")
    listing = planner_api.get("/api/v1/monitoring/targets/")

    assert detail.status_code == 200
    assert detail.json()["has_token"] is True
    assert "token" not in detail.json()
    assert SECRET not in detail.content.decode() + listing.content.decode()


def test_the_edit_page_does_not_render_the_token(make_target, planner_client):
    target = make_target(token=SECRET)

    response = planner_client.get(f"/monitoring/targets/{target.pk}/edit/")

    assert response.status_code == 200
    assert SECRET not in response.content.decode()
    assert b"A token is saved" in response.content


def test_saving_the_form_with_an_empty_token_keeps_the_saved_one(make_target, planner_client):
    target = make_target(token=SECRET)

    response = planner_client.post(
        f"/monitoring/targets/{target.pk}/edit/",
        {
            "name": target.name,
            "kind": "vllm",
            "base_url": target.base_url,
            "poll_interval_s": 30,
            "enabled": "on",
            "token": "",
        },
    )

    assert response.status_code == 302
    target = Target.objects.get(pk=target.pk)
    assert (target.token, target.poll_interval_s) == (SECRET, 30)


def test_the_token_can_be_replaced_and_removed_through_the_api(make_target, planner_api):
    target = make_target(token=SECRET)
    url = f"/api/v1/monitoring/targets/{target.pk}/"

    planner_api.patch(url, {"token": "new-token"}, format="json")
    assert Target.objects.get(pk=target.pk).token == "new-token"
    planner_api.patch(url, {"clear_token": True}, format="json")
    assert Target.objects.get(pk=target.pk).token == ""


@pytest.mark.enable_socket
def test_the_token_is_sent_as_a_bearer_and_never_logged(make_target, http_server, caplog):
    base, script = http_server
    script.route = lambda path: (500, {}, [b"nope"])
    target = make_target(base_url=f"{base}/v", token=SECRET)
    caplog.set_level(logging.DEBUG)

    report = poll(Target.objects.defer("token").get(pk=target.pk))

    assert not report.ok
    ((path, headers),) = script.gets
    assert (path, headers["Authorization"]) == ("/v/metrics", f"Bearer {SECRET}")
    assert SECRET not in caplog.text
    target.refresh_from_db()
    assert SECRET not in target.last_error


@pytest.fixture
def unreadable_token_alerting(make_target, http_server):
    """A target whose saved token no key can decrypt (keys rotated away), with an open alert
    that has a webhook: exactly when its owners need the alert to get through."""
    from datetime import UTC, datetime

    from monitoring.alerts.evaluate import alerts_evaluate
    from monitoring.services import alert_rule_create, alert_rule_webhook_set

    base, script = http_server
    target = make_target(token=SECRET)
    rule = alert_rule_create(
        name="down", target=target, series="poll.up", threshold=0.5, comparison="lt"
    )
    alert_rule_webhook_set(rule=rule, url=f"{base}/hook")
    (event, _), *_ = [
        t
        for t in alerts_evaluate(target=target, values={"poll.up": 0.0}, now=datetime.now(UTC))
        if t[0].rule_id == rule.pk
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE monitoring_target SET token = %s WHERE id = %s",
            ["gAAAAA-rotated-away", target.pk],
        )
    return target, event, script


def test_an_unreadable_token_does_not_break_the_state_api(unreadable_token_alerting, viewer_api):
    target, event, _ = unreadable_token_alerting

    response = viewer_api.get(f"/api/v1/monitoring/targets/{target.pk}/state/")

    assert response.status_code == 200
    assert [e["id"] for e in response.json()["open_events"]] == [event.pk]


@pytest.mark.enable_socket
def test_an_unreadable_token_does_not_stop_the_alerts_webhook(unreadable_token_alerting):
    from monitoring.tasks import deliver_webhook

    _, event, script = unreadable_token_alerting

    deliver_webhook.apply(kwargs={"event_id": event.pk, "transition": "opened"}, throw=True)

    assert [path for path, _, _ in script.posts] == ["/hook"]


def test_a_rule_can_be_added_to_a_target_whose_token_is_unreadable(
    unreadable_token_alerting, planner_api
):
    target, _, _ = unreadable_token_alerting

    response = planner_api.post(
        "/api/v1/monitoring/alert-rules/",
        {"name": "busy", "target": target.pk, "series": "vllm.requests_waiting", "threshold": 5},
        format="json",
    )

    assert response.status_code == 201, response.content
    assert response.json()["target"] == target.pk


def test_the_admin_pages_of_rules_and_events_survive_an_unreadable_token(
    unreadable_token_alerting, admin_client_
):
    target, event, _ = unreadable_token_alerting

    for url in (
        "/admin/monitoring/target/",
        f"/admin/monitoring/target/{target.pk}/change/",
        "/admin/monitoring/alertevent/",
        f"/admin/monitoring/alertevent/{event.pk}/change/",
        "/admin/monitoring/alertrule/",
        f"/admin/monitoring/alertrule/{event.rule_id}/change/",
    ):
        assert admin_client_.get(url).status_code == 200, url
