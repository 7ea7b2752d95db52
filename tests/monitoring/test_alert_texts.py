"""Alerts read in words (issue 30 item 8): an XID code says what it means, the rule filter names
whose rule each choice is, and the state filter offers open, resolved or any."""

import pytest
from django.utils import timezone, translation

from monitoring.filters import AlertEventFilter
from monitoring.models import AlertEvent
from monitoring.services import alert_rule_create
from monitoring.templatetags.monitoring_tags import alert_value

pytestmark = pytest.mark.django_db


def test_an_xid_code_reads_with_its_meaning(make_target):
    rule = alert_rule_create(
        name="GPU XID error", target=make_target(kind="gpu"), series="gpu.xid_last", threshold=0
    )

    with translation.override("en"):
        shown = alert_value(79.0, rule)
    assert shown.startswith("XID 79: the GPU has fallen off the bus")
    assert "79.000" not in shown
    with translation.override("zh-hans"):
        assert "XID 79" in alert_value(79.0, rule)
        assert "总线" in alert_value(79.0, rule)
    other = alert_rule_create(name="kv", series="vllm.kv_cache_usage_pct", threshold=90)
    with translation.override("en"):
        assert alert_value(93.25, other) == "93.250"


def test_the_rule_filter_names_whose_rule_and_the_state_filter_has_no_unknown(
    make_target, planner_client
):
    for name in ("vllm-01", "vllm-02"):
        make_target(name=name)  # each gets the default rules, with the same names

    with translation.override("en"):
        form = AlertEventFilter(data={}, queryset=AlertEvent.objects.all()).form
        labels = [label for _, label in form.fields["rule"].choices][1:]
        states = [str(label) for _, label in form.fields["open"].choices]
    assert len(labels) == len(set(labels)) > 2  # no name listed twice
    down = [label for label in labels if label.startswith("Target down")]
    assert len(down) == 2
    assert any(label.endswith("· vllm-01") for label in down)
    assert any(label.endswith("· vllm-02") for label in down)
    assert states == ["any", "open", "resolved"]
    assert "Unknown" not in planner_client.get("/monitoring/events/").content.decode()


def test_the_state_filter_filters(make_target):
    rule = alert_rule_create(name="x", target=make_target(), series="poll.up", threshold=0)
    now = timezone.now()
    for resolved in (None, now):
        AlertEvent.objects.create(
            rule=rule, target=rule.target, opened_at=now, value=1, last_value=1,
            message="m", resolved_at=resolved,
        )  # fmt: skip

    def count(state: str) -> int:
        return AlertEventFilter(data={"open": state}, queryset=AlertEvent.objects.all()).qs.count()

    assert (count("true"), count("false"), count("")) == (1, 1, 2)
