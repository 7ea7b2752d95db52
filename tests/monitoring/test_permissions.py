"""Only planners and admins add or change targets; the URL guard refuses unsafe addresses."""

from __future__ import annotations

import pytest

from monitoring.models import Target

pytestmark = pytest.mark.django_db

NEW = {"name": "gpu-01", "kind": "vllm", "base_url": "http://127.0.0.1:8000", "poll_interval_s": 15}


def test_a_viewer_reads_the_pages_but_cannot_add_a_target(viewer_client, make_target):
    target = make_target()

    assert viewer_client.get("/monitoring/").status_code == 200
    assert viewer_client.get(f"/monitoring/targets/{target.pk}/").status_code == 200
    assert viewer_client.get("/monitoring/targets/new/").status_code == 403
    assert viewer_client.post("/monitoring/targets/new/", NEW).status_code == 403
    assert viewer_client.post(f"/monitoring/targets/{target.pk}/delete/").status_code == 403
    assert not Target.objects.filter(name="gpu-01").exists()


def test_a_viewer_cannot_write_through_the_api(viewer_api, make_target):
    target = make_target()

    assert viewer_api.post("/api/v1/monitoring/targets/", NEW, format="json").status_code == 403
    assert viewer_api.delete(f"/api/v1/monitoring/targets/{target.pk}/").status_code == 403
    assert viewer_api.get("/api/v1/monitoring/targets/").status_code == 200


def test_anonymous_users_are_sent_to_login_or_refused(client):
    assert client.get("/monitoring/").status_code == 302
    assert client.get("/api/v1/monitoring/targets/").status_code in (401, 403)


def test_a_planner_adds_a_target_through_the_page(planner_client):
    response = planner_client.post("/monitoring/targets/new/", {**NEW, "enabled": "on"})

    target = Target.objects.get(name="gpu-01")
    assert response.status_code == 302
    assert response["Location"] == target.get_absolute_url()
    assert target.alert_rules.filter(is_default=True).count() == 5


def test_a_planner_adds_a_target_through_the_api(planner_api):
    response = planner_api.post(
        "/api/v1/monitoring/targets/", {**NEW, "token": "t0k"}, format="json"
    )

    assert response.status_code == 201, response.json()
    assert response.json()["has_token"] is True
    assert Target.objects.get(name="gpu-01").token == "t0k"


def test_an_admin_may_delete_a_target(admin_client_, make_target):
    target = make_target()

    response = admin_client_.post(f"/monitoring/targets/{target.pk}/delete/")

    assert response.status_code == 302
    assert not Target.objects.filter(pk=target.pk).exists()


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://169.254.169.254/metrics", "forbidden range"),
        ("http://[fd00:ec2::254]:80/", "forbidden range"),
        ("http://[fe80::1]:8000/", "forbidden range"),
        ("ftp://127.0.0.1/metrics", "only http and https"),
        ("http://admin:pw@127.0.0.1:8000", "credentials"),
    ],
    ids=["cloud-metadata", "aws-ipv6-metadata", "link-local-v6", "not-http", "credentials"],
)
def test_unsafe_target_urls_are_refused_with_a_message(planner_api, url, fragment):
    response = planner_api.post(
        "/api/v1/monitoring/targets/", {**NEW, "base_url": url}, format="json"
    )

    assert response.status_code == 400
    assert fragment in str(response.json().get("base_url"))


def test_the_operator_allowlist_is_enforced(planner_api, settings):
    settings.MONITORING_URL_ALLOWLIST = ["10.0.0.0/8"]
    settings.MONITORING_ALLOW_LOOPBACK = False  # production's default

    refused = planner_api.post("/api/v1/monitoring/targets/", NEW, format="json")
    allowed = planner_api.post(
        "/api/v1/monitoring/targets/", {**NEW, "base_url": "http://10.1.2.3:8000"}, format="json"
    )

    assert refused.status_code == 400
    assert "allowlist" in str(refused.json()["base_url"])
    assert allowed.status_code == 201


@pytest.mark.parametrize("interval", [4, 3601], ids=["below-5-s", "above-1-h"])
def test_the_poll_interval_range_is_enforced(planner_api, interval):
    response = planner_api.post(
        "/api/v1/monitoring/targets/", {**NEW, "poll_interval_s": interval}, format="json"
    )

    assert response.status_code == 400
    assert "poll_interval_s" in response.json()


def test_the_form_names_the_field_and_range(planner_client):
    response = planner_client.post("/monitoring/targets/new/", {**NEW, "poll_interval_s": 2})

    assert response.status_code == 400
    assert b"greater than or equal to 5" in response.content


def test_the_admin_lists_targets_without_their_token(admin_client_, make_target):
    target = make_target(token="sk-admin-must-not-see")

    listing = admin_client_.get("/admin/monitoring/target/")
    change = admin_client_.get(f"/admin/monitoring/target/{target.pk}/change/")

    assert listing.status_code == change.status_code == 200
    assert b"sk-admin-must-not-see" not in listing.content + change.content
