"""Headless Chromium walks the loop: plan → benchmark the server → side by side → calibrate.

The plan is the simulated llama-8b server's (as in `make run`'s demo); the benchmarks worker is
stood in for by a thread that runs the queued run, as the Celery task does.
"""

from __future__ import annotations

import threading

import pytest

from benchmarks import services
from planner.models import CalibrationProfile
from tests.browser import CSP_PROBE
from tests.monitoring.browser.test_live_dashboards import browser_page  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.enable_socket,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def worker_thread(monkeypatch):
    """Run what is sent to the benchmarks queue in a thread, as the worker would."""
    threads: list[threading.Thread] = []

    def send_task(name, kwargs, queue):
        assert (name, queue) == ("benchmarks.run", "benchmarks")
        thread = threading.Thread(target=services.run_execute, kwargs=kwargs, daemon=True)
        thread.start()
        threads.append(thread)

    monkeypatch.setattr(services.current_app, "send_task", send_task)
    yield threads
    for thread in threads:
        thread.join(timeout=60)


def test_benchmark_the_plans_server_compare_and_calibrate(
    browser_page,  # noqa: F811
    live_server,
    linked_target,
    worker_thread,
):
    page, errors = browser_page
    page.add_init_script(CSP_PROBE)
    plan = linked_target.plan
    page.goto(live_server.url + plan.get_absolute_url())
    page.goto(live_server.url + "/benchmarks/")
    page.select_option("select[name=target]", str(linked_target.pk))
    page.fill("input[name=requests]", "6")
    page.fill("input[name=concurrency]", "1, 3")
    page.fill("input[name=input_tokens]", "64")
    page.fill("input[name=output_tokens]", "8")
    page.click("#benchmark-form button[type=submit]")

    # The run page polls its progress and reloads when the run ends.
    page.wait_for_selector("#plan-side-by-side", timeout=60_000)
    page.wait_for_function(
        "() => document.querySelector('#benchmark-curve .main-svg') !== null", timeout=20_000
    )
    traces = page.evaluate("() => document.getElementById('benchmark-curve').data.length")
    assert traces == 5  # the band, then predicted and measured throughput and TPOT
    assert "llama-8b" in page.text_content("h1")

    page.click("#calibrate")
    page.wait_for_url("**/monitoring/calibration/**")
    profile = CalibrationProfile.objects.get()
    assert profile.sources[0]["target"] == linked_target.name
    assert profile.key in page.text_content("h1")
    assert errors == []
    assert page.evaluate("window.__cspViolations || []") == []
