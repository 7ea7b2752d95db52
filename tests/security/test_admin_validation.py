"""Issue 33 item 11: the Django admin applies the API's validation. A webhook URL passes the
network guard and gets a new signing secret; targets are not written through the admin; GPU
figures are bounded."""

import pytest

from inventory.models import GpuType
from monitoring.models import AlertRule, Target
from monitoring.services import alert_rule_create, alert_rule_webhook_set, target_create
from tests.inventory.factories import GpuTypeFactory

pytestmark = pytest.mark.django_db


def _rule_form(rule: AlertRule, **changes) -> dict:
    data = {
        "name": rule.name,
        "target": rule.target_id or "",
        "series": rule.series,
        "comparison": rule.comparison,
        "threshold": rule.threshold,
        "duration_s": rule.duration_s,
        "enabled": "on" if rule.enabled else "",
        "webhook_url": rule.webhook_url,
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/latest/meta-data", "http://user:pw@127.0.0.1:9/hook"]
)
def test_the_admin_refuses_a_webhook_url_the_api_refuses(admin_client_, url):
    rule = alert_rule_create(name="x", series="poll.up", comparison="lt", threshold=1)

    response = admin_client_.post(
        f"/admin/monitoring/alertrule/{rule.pk}/change/", _rule_form(rule, webhook_url=url)
    )

    assert response.status_code == 200  # the form again, with the error
    assert "webhook_url" in response.context["adminform"].form.errors
    rule.refresh_from_db()
    assert (rule.webhook_url, rule.webhook_secret) == ("", "")


def test_a_webhook_url_changed_in_the_admin_gets_a_new_secret(admin_client_):
    rule = alert_rule_create(name="x", series="poll.up", comparison="lt", threshold=1)
    old_secret = alert_rule_webhook_set(rule=rule, url="http://127.0.0.1:9/old")

    response = admin_client_.post(
        f"/admin/monitoring/alertrule/{rule.pk}/change/",
        _rule_form(rule, webhook_url="http://127.0.0.1:9/new"),
        follow=True,
    )

    assert response.status_code == 200
    rule.refresh_from_db()
    assert rule.webhook_url == "http://127.0.0.1:9/new"
    assert rule.webhook_secret not in ("", old_secret)
    shown = [str(m) for m in response.context["messages"]]
    assert any(rule.webhook_secret in m for m in shown)


def test_an_unchanged_webhook_url_keeps_its_secret(admin_client_):
    rule = alert_rule_create(name="x", series="poll.up", comparison="lt", threshold=1)
    secret = alert_rule_webhook_set(rule=rule, url="http://127.0.0.1:9/hook")

    admin_client_.post(
        f"/admin/monitoring/alertrule/{rule.pk}/change/", _rule_form(rule, threshold=2)
    )

    rule.refresh_from_db()
    assert rule.threshold == 2
    assert rule.webhook_secret == secret


def test_targets_are_read_only_in_the_admin(admin_client_):
    target = target_create(name="t", kind="vllm", base_url="http://127.0.0.1:9/v")

    added = admin_client_.post(
        "/admin/monitoring/target/add/",
        {"name": "meta", "kind": "vllm", "base_url": "http://169.254.169.254/"},
    )
    changed = admin_client_.post(
        f"/admin/monitoring/target/{target.pk}/change/",
        {"name": "t", "kind": "vllm", "base_url": "http://169.254.169.254/"},
    )

    assert added.status_code == 403
    assert changed.status_code == 403
    assert not Target.objects.filter(name="meta").exists()
    target.refresh_from_db()
    assert target.base_url == "http://127.0.0.1:9/v"
    assert admin_client_.get(f"/admin/monitoring/target/{target.pk}/change/").status_code == 200


def test_the_admin_refuses_a_gpu_figure_beyond_the_engines_bound(admin_client_):
    gpu = GpuTypeFactory(a800=True)
    form = {
        "slug": gpu.slug,
        "name": gpu.name,
        "vendor": gpu.vendor,
        "memory_gib": "1e308",
        "hbm_bandwidth_gbs": gpu.hbm_bandwidth_gbs,
        "bf16_dense_tflops": gpu.bf16_dense_tflops,
        "nvlink_bandwidth_gbs": gpu.nvlink_bandwidth_gbs,
        "form_factor": gpu.form_factor,
    }

    response = admin_client_.post(f"/admin/inventory/gputype/{gpu.pk}/change/", form)

    assert response.status_code == 200
    assert "memory_gib" in response.context["adminform"].form.errors
    assert GpuType.objects.get(pk=gpu.pk).memory_gib == gpu.memory_gib
