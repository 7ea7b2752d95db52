"""Headless Chromium: the fleet overview and a target page update their charts without a reload
while the simulator runs and targets are polled."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.utils import timezone

from monitoring.polling.run import poll
from monitoring.tasks import fleet_tick_record

pytestmark = [
    pytest.mark.browser,
    pytest.mark.enable_socket,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def browser_page(browser, live_server, planner):
    client = Client()
    client.force_login(planner)
    session = client.cookies["sessionid"].value
    context = browser.new_context()
    context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: _console(msg, errors))
    # Failed requests are checked by URL (the site has no /favicon.ico: not ours).
    page.on("response", lambda response: _response(response, errors))
    yield page, errors
    context.close()


def _console(msg, errors: list[str]) -> None:
    if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
        errors.append(msg.text)


def _response(response, errors: list[str]) -> None:
    if response.status >= 400 and not response.url.endswith("/favicon.ico"):
        errors.append(f"{response.status} {response.url}")


def _wait_for_chart(page, selector: str, errors: list[str]) -> None:
    """Wait until the chart has drawn data; on failure say what the page showed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_selector(f"{selector}[data-points]:not([data-points='0'])", timeout=60_000)
    except PlaywrightTimeout:
        shown = page.inner_text(selector)
        raise AssertionError(
            f"{selector} drew no data; it shows {shown!r}; errors {errors}"
        ) from None


def _points(page, selector: str) -> int:
    return int(page.get_attribute(selector, "data-points") or 0)


def _poll_round(targets) -> None:
    """Poll every target, then the scheduler's tick that sums the fleet (the overview reads it)."""
    for target in targets:
        poll(target)
    fleet_tick_record(now=timezone.now())


def _wait_for_more_points(page, selector: str, before: int, targets, timeout_s: float = 30):
    """Keep polling the targets until the chart shows more points than `before`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        _poll_round(targets)
        page.wait_for_timeout(1500)
        if _points(page, selector) > before:
            return _points(page, selector)
    raise AssertionError(f"{selector} never updated beyond {before} points")


def test_overview_and_target_page_update_in_place(
    browser_page, live_server, simulator, make_target
):
    page, errors = browser_page
    targets = [
        make_target(name=t.name, kind=t.kind, base_url=t.base_url, poll_interval_s=5)
        for t in simulator.targets()
    ]
    for _ in range(2):
        _poll_round(targets)
        time.sleep(1.1)

    page.goto(f"{live_server.url}/monitoring/")
    _wait_for_chart(page, "#chart-fleet-requests", errors)
    page.evaluate("window.__notReloaded = true")
    before = _points(page, "#chart-fleet-requests")
    tiles = page.locator(".target-tile").count()

    after = _wait_for_more_points(page, "#chart-fleet-requests", before, targets)

    assert after > before
    assert page.evaluate("window.__notReloaded") is True
    assert tiles == len(targets)
    assert page.locator(".plot-container").count() >= 2  # Plotly drew both fleet charts

    vllm = targets[0]
    page.goto(f"{live_server.url}{vllm.get_absolute_url()}")
    _wait_for_chart(page, "#chart-requests", errors)
    page.evaluate("window.__notReloaded = true")
    before = _points(page, "#chart-requests")

    after = _wait_for_more_points(page, "#chart-requests", before, [vllm])

    assert after > before
    assert page.evaluate("window.__notReloaded") is True
    # A chart without data says why instead of drawing an empty frame.
    empty = page.locator("#chart-preemptions .chart-empty")
    assert empty.is_hidden() or empty.inner_text()

    ray = targets[-1]
    page.goto(f"{live_server.url}{ray.get_absolute_url()}")
    _wait_for_chart(page, "#chart-gpu-heatmap", errors)
    _wait_for_chart(page, "#chart-ray-gpu-history", errors)
    # History rows are "<host name> GPU <index>", as the last-poll heatmap names its rows.
    last_poll = page.evaluate("document.querySelector('#chart-gpu-heatmap .chart-plot').data[0].y")
    history = page.evaluate(
        "document.querySelector('#chart-ray-gpu-history .chart-plot').data[0].y"
    )
    assert history
    assert not [row for row in history if "node=" in row]
    assert all(any(row.startswith(f"{host} GPU ") for host in last_poll) for row in history)
    page.click(".range-selector [data-range='15m']")
    page.wait_for_timeout(500)
    assert page.get_attribute(".range-selector [data-range='15m']", "aria-pressed") == "true"
    assert errors == []
