"""`manage.py poll NAME`: one poll now, stored exactly as the worker stores it."""

from __future__ import annotations

import socket
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from monitoring.models import AlertEvent, PollStatus, Sample, Target

pytestmark = pytest.mark.django_db


@pytest.mark.enable_socket
def test_poll_stores_a_simulated_servers_samples_and_facts(simulator, make_target):
    sim = next(t for t in simulator.targets() if t.kind == "vllm")
    target = make_target(name="by-hand", base_url=sim.base_url)
    out = StringIO()

    call_command("poll", "by-hand", stdout=out)

    target.refresh_from_db()
    assert target.last_status == PollStatus.OK
    assert "by-hand: up" in out.getvalue()
    assert Sample.objects.filter(target=target, series="vllm.requests_running").exists()
    assert target.info["cache_config"]["num_gpu_blocks"]
    served = target.info["served_models"][0]
    assert served["id"]
    assert served["max_model_len"] == 8192


@pytest.mark.enable_socket
def test_a_failed_poll_is_stored_and_reported(make_target):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = make_target(name="gone", base_url=f"http://127.0.0.1:{port}")
    rule = target.alert_rules.get(series="poll.consecutive_failures")
    rule.threshold = 1
    rule.save()

    with pytest.raises(CommandError, match="connect"):
        call_command("poll", "gone", stdout=StringIO())

    target.refresh_from_db()
    assert target.last_status == PollStatus.ERROR
    assert target.consecutive_failures == 1
    assert AlertEvent.objects.filter(target=target, rule=rule).exists()  # alerts, as the worker


def test_an_unknown_name_lists_the_targets(make_target):
    make_target(name="known")
    with pytest.raises(CommandError, match="known"):
        call_command("poll", "nope")
    assert Target.objects.count() == 1
