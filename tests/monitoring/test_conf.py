"""Monitoring settings are Django settings read from the environment like every other one."""

import os
import subprocess
import sys

from monitoring import conf


def test_poll_limits_follow_the_settings(settings):
    settings.MONITORING_SAMPLE_LIMIT = 123
    settings.MONITORING_TOTAL_TIMEOUT_S = 9.0

    assert conf.scrape_limits().sample_limit == 123
    assert conf.scrape_limits(sample_limit=7).sample_limit == 7
    assert conf.poll_budget_s() == 9.0
    assert conf.poll_budget_s(5) == 4.0  # 0.8 of the poll interval


def test_monitoring_settings_come_from_the_environment():
    code = (
        "import django; django.setup(); from monitoring import conf; "
        "from django.conf import settings; "
        "print(conf.scrape_limits().label_limit, settings.MONITORING_WEBHOOK_TIMEOUT_S)"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "MONITORING_LABEL_LIMIT": "17",
        "MONITORING_WEBHOOK_TIMEOUT_S": "2.5",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["17", "2.5"]
