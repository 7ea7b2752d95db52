"""Issue 15, item 2: monitoring targets and webhooks are no reconnaissance tool.

Production settings reach only the inventory's machines and what an admin lists; errors tell
non-admins nothing about ports; webhooks are admins' and signed.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from monitoring.models import AlertRule, AllowlistEntry, Target
from monitoring.polling.run import poll
from monitoring.services import alert_rule_create, allowlist_entry_create
from monitoring.targets import reach
from tests.inventory.factories import MachineFactory

pytestmark = pytest.mark.django_db

NEW = {"name": "probe", "kind": "vllm", "poll_interval_s": 15}
TARGETS = "/api/v1/monitoring/targets/"


@pytest.fixture
def admin_api(admin_user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(admin_user)
    return client


@pytest.fixture
def production_reach(settings):
    """Production's defaults: no loopback, no operator entries."""
    settings.MONITORING_ALLOW_LOOPBACK = False
    settings.MONITORING_URL_ALLOWLIST = []


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:6379", "http://[::1]:5432", "http://10.9.8.7:22", "http://192.168.0.1"],
)
def test_by_default_a_planner_cannot_point_a_target_at_an_internal_port(
    planner_api, production_reach, url
):
    response = planner_api.post(TARGETS, {**NEW, "base_url": url}, format="json")

    assert response.status_code == 400
    assert "allowlist" in str(response.json()["base_url"])
    assert not Target.objects.exists()


def test_the_inventory_machines_are_reachable_by_address_and_name(planner_api, production_reach):
    MachineFactory(hostname="gpu-a1", management_address="10.20.0.5")

    by_address = planner_api.post(
        TARGETS, {**NEW, "base_url": "http://10.20.0.5:8000"}, format="json"
    )
    allowlist = reach.allowlist()

    assert by_address.status_code == 201, by_address.json()
    assert allowlist.allows_name("gpu-a1")
    assert not allowlist.allows_name("gpu-a2")


def test_an_admin_widens_the_allowlist_on_its_page_and_the_change_is_audited(
    admin_client, planner_api, production_reach
):
    refused = planner_api.post(TARGETS, {**NEW, "base_url": "http://10.30.1.9:8000"}, format="json")
    page = admin_client.post("/monitoring/allowlist/", {"name": "10.30.1.0/24", "note": "lab"})
    allowed = planner_api.post(TARGETS, {**NEW, "base_url": "http://10.30.1.9:8000"}, format="json")

    assert refused.status_code == 400
    assert page.status_code == 302
    assert allowed.status_code == 201
    entry = AllowlistEntry.objects.get(name="10.30.1.0/24")
    (created,) = entry.history.all()
    assert created.history_type == "+"
    assert "admin" in created.history_user.username


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("169.254.0.0/16", "never reachable"),
        ("0.0.0.0/0", "too wide"),
        ("::/0", "too wide"),
        ("not a host!", "RFC 1123"),
    ],
)
def test_the_allowlist_refuses_mistakes_naming_the_field(value, fragment):
    with pytest.raises(ValidationError) as info:
        allowlist_entry_create(name=value)

    assert fragment in " ".join(info.value.message_dict["name"])


def test_a_planner_cannot_edit_the_allowlist(planner_client):
    assert planner_client.get("/monitoring/allowlist/").status_code == 403
    assert planner_client.post("/monitoring/allowlist/", {"name": "10.0.0.0/8"}).status_code == 403
    assert not AllowlistEntry.objects.exists()


@pytest.mark.enable_socket
def test_a_non_metrics_body_never_reaches_the_stored_error(make_target, http_server):
    base, script = http_server
    secret_file = b"DATABASE_URL=postgres://app:hunter2@db/prod\nSECRET_KEY=abc\n"
    script.route = lambda path: (200, {"Content-Type": "text/plain"}, [secret_file])
    target = make_target(base_url=base)

    poll(target)

    target.refresh_from_db()
    assert target.last_error_kind == "parse"
    assert "hunter2" not in target.last_error
    assert "SECRET_KEY" not in target.last_error


@pytest.mark.enable_socket
@pytest.mark.parametrize(
    "route",
    [
        lambda path: (404, {}, [b"nothing here"]),
        lambda path: (200, {}, [b"<html>Welcome to nginx</html>"]),
    ],
    ids=["http-404", "html"],
)
def test_non_admins_read_one_summary_for_every_unreachable_kind(
    make_target, http_server, planner_api, admin_api, route
):
    base, script = http_server
    script.route = route
    closed = make_target(name="closed", base_url="http://127.0.0.1:9")
    answering = make_target(name="answering", base_url=base)
    poll(closed)
    poll(answering)

    planner_view = {
        t["name"]: (t["last_error_kind"], t["last_error"])
        for t in planner_api.get(TARGETS).json()["results"]
    }
    admin_view = {t["name"]: t["last_error_kind"] for t in admin_api.get(TARGETS).json()["results"]}

    assert planner_view["closed"] == planner_view["answering"]  # a port scan learns nothing
    assert planner_view["closed"][0] == "unreachable"
    assert admin_view["closed"] == "connect"
    assert admin_view["answering"] in ("http_status", "parse")


def test_webhooks_are_admins_to_set_and_to_read(planner_api, admin_api, make_target):
    rule = alert_rule_create(name="w", target=make_target(), series="poll.up", threshold=0)
    detail = f"/api/v1/monitoring/alert-rules/{rule.pk}/"

    sneaky = planner_api.patch(detail, {"webhook_url": "http://127.0.0.1:9/x"}, format="json")
    assert sneaky.status_code == 200
    assert AlertRule.objects.get(pk=rule.pk).webhook_url == ""
    refused = planner_api.post(f"{detail}webhook/", {"webhook_url": "http://127.0.0.1:9/x"})
    created = admin_api.post(
        f"{detail}webhook/", {"webhook_url": "http://127.0.0.1:9/hook"}, format="json"
    )

    assert refused.status_code == 403
    assert created.status_code == 200
    assert created["Cache-Control"] == "no-store"
    assert len(created.json()["secret"]) >= 32
    assert planner_api.get(detail).json()["webhook_url"] is None
    assert admin_api.get(detail).json()["webhook_url"] == "http://127.0.0.1:9/hook"


def test_a_webhook_outside_the_allowlist_is_refused(admin_api, make_target, settings):
    rule = alert_rule_create(name="w", target=make_target(), series="poll.up", threshold=0)
    settings.MONITORING_ALLOW_LOOPBACK = False

    response = admin_api.post(
        f"/api/v1/monitoring/alert-rules/{rule.pk}/webhook/",
        {"webhook_url": "http://10.99.0.1:8080/hook"},
        format="json",
    )

    assert response.status_code == 400
    assert "webhook_url" in response.json()


def test_a_machine_at_a_loopback_address_does_not_open_loopback(planner_api, production_reach):
    MachineFactory(hostname="sneaky", management_address="127.0.0.1")
    MachineFactory(hostname="localhost")

    response = planner_api.post(
        TARGETS, {**NEW, "base_url": "http://127.0.0.1:6379"}, format="json"
    )

    assert response.status_code == 400
    assert "sneaky" in reach.inventory_hosts()
    assert "127.0.0.1" not in reach.inventory_hosts()
