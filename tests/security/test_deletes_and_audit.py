"""Issue 15 item 7: what saved plans rely on is protected; target deletes show their cost; the
audit log covers targets, alert rules, API tokens, users and role changes."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from core.audit import audit_entries, audit_sources
from core.models import ApiToken
from inventory import services
from inventory.models import Machine, Pool
from monitoring.models import AlertRule, Sample, Target
from monitoring.services import target_create
from planner.services import plan_create
from tests.monitoring.factories import write_series
from tests.planner.conftest import S1_SPEC, S2A_SPEC
from tests.planner.fleet import build_demo_fleet

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet(db):
    return build_demo_fleet()


def test_a_machine_a_saved_plan_runs_on_cannot_be_deleted(fleet, planner, planner_api):
    plan = plan_create(spec=S1_SPEC, actor=planner, title="S1 plan")
    machine = Machine.objects.get(hostname="a800-01")

    response = planner_api.delete(f"/api/v1/inventory/machines/{machine.pk}/")

    assert response.status_code == 409
    assert f"plan: {plan.title}" in response.json()["used_by"]
    assert Machine.objects.filter(pk=machine.pk).exists()


def test_a_pool_a_saved_plan_names_cannot_be_deleted(fleet, planner):
    plan_create(spec=S2A_SPEC, actor=planner, title="S2a plan")
    pool = Pool.objects.get(name="a100-pool")

    with pytest.raises(services.InUseError):
        services.pool_delete(pool=pool, actor=planner)

    assert Pool.objects.filter(pk=pool.pk).exists()
    assert pool.machines.exists()


def test_a_machine_no_plan_uses_can_still_be_deleted(fleet, planner):
    plan_create(spec=S1_SPEC, actor=planner, title="S1 plan")  # on the A800s only
    machine = Machine.objects.get(hostname="a100-01")

    services.machine_delete(machine=machine, actor=planner)

    assert not Machine.objects.filter(pk=machine.pk).exists()


@pytest.fixture
def polled_target(db):
    from django.utils import timezone

    target = target_create(name="vllm-a", kind="vllm", base_url="http://127.0.0.1:9/")
    write_series(target, "vllm.running", start=timezone.now(), step_s=5, count=7)
    return target


def test_target_delete_page_shows_what_would_be_lost(planner_client, polled_target):
    response = planner_client.get(f"/monitoring/targets/{polled_target.pk}/delete/")

    page = response.content.decode()
    assert "7 samples" in page
    assert "Disable instead" in page


def test_target_can_be_disabled_from_the_delete_page(planner_client, polled_target):
    response = planner_client.post(
        f"/monitoring/targets/{polled_target.pk}/delete/", {"action": "disable"}
    )

    assert response.status_code == 302
    polled_target.refresh_from_db()
    assert polled_target.enabled is False
    assert Sample.objects.filter(target=polled_target).count() == 7


@pytest.mark.parametrize(
    "model", [Target, AlertRule, ApiToken, get_user_model()], ids=lambda m: m.__name__
)
def test_the_audit_log_covers(model):
    assert model._meta.label_lower in {source.key for source in audit_sources()}


def test_target_and_alert_rule_changes_are_audited_without_secrets(polled_target):
    from monitoring.services import alert_rule_create

    alert_rule_create(name="KV high", series="vllm.kv_cache_usage_pct", threshold=90)

    keys = {row["audit_source"] for row in audit_entries()}

    assert {"monitoring.target", "monitoring.alertrule"} <= keys
    assert "token" not in {f.name for f in Target.history.model._meta.fields}
    assert "webhook_secret" not in {f.name for f in AlertRule.history.model._meta.fields}


def test_a_role_change_is_in_the_audit_log_with_before_and_after(admin_user, viewer):
    from core.services import set_role

    set_role(user=viewer, role="planner", actor=admin_user)

    rows = list(audit_entries(source_keys=["auth.user"], user_id=admin_user.pk))
    assert rows[0]["history_change_reason"] == "role: viewer → planner"
    assert set(viewer.groups.values_list("name", flat=True)) == {"planner"}
    assert Group.objects.get(name="viewer").user_set.filter(pk=viewer.pk).count() == 0


def test_api_token_creation_and_revocation_are_audited(planner):
    token, _ = ApiToken.issue(user=planner, name="ci")
    token.revoke()

    rows = list(audit_entries(source_keys=["core.apitoken"]))
    assert [r["history_type"] for r in rows] == ["~", "+"]
    assert "key_hash" not in {f.name for f in ApiToken.history.model._meta.fields}


def test_the_machine_delete_page_names_the_plans_and_offers_retiring(
    fleet, planner, planner_client
):
    plan_create(spec=S1_SPEC, actor=planner, title="S1 plan")
    machine = Machine.objects.get(hostname="a800-01")

    page = planner_client.get(f"/inventory/machines/{machine.pk}/delete/").content.decode()

    assert "plan: S1 plan" in page
    assert "set its status to retired" in page
