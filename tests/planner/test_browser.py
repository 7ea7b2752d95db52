"""The wizard in real headless Chromium, from an empty browser to the config archive."""

import io
import os
import zipfile
from pathlib import Path

import pytest

from tests.browser import CSP_PROBE
from tests.planner.fleet import build_demo_fleet

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]

SCREENSHOTS = Path(os.environ.get("SERVEPLAN_SCREENSHOTS", "/tmp/serveplan-wizard"))
PASSWORD = "pw-for-tests-1"


@pytest.fixture(autouse=True)
def role_groups(transactional_db):
    """Recreate the role groups: a transactional test flushes what migrations created."""
    from django.contrib.auth.models import Group

    for name in ("viewer", "planner", "admin"):
        Group.objects.get_or_create(name=name)


@pytest.fixture
def fleet(transactional_db):
    return build_demo_fleet()


@pytest.fixture
def page(browser, live_server, planner, fleet):
    """A fresh browser context (no cookies) whose console errors and CSP violations are kept."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1360, "height": 900})
    context.add_init_script(CSP_PROBE)
    page = context.new_page()
    page.errors = []

    def on_console(msg) -> None:
        # Chromium asks for /favicon.ico by itself; its 404 is not an error of our pages.
        if msg.type == "error" and not msg.location.get("url", "").endswith("/favicon.ico"):
            page.errors.append(f"console {msg.type}: {msg.text} at {msg.location}")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: page.errors.append(f"pageerror: {exc}"))
    page.set_default_timeout(15_000)
    yield page
    context.close()


def _csp_violations(page) -> list:
    return page.evaluate("window.__cspViolations || []")


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _shot_sections(page, name: str) -> None:
    """Screenshot the top of a result page and each of its sections."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-top.png"))
    for i, section in enumerate(page.locator("main > section, main > .grid-2").all()):
        section.screenshot(path=str(SCREENSHOTS / f"{name}-section{i}.png"))


def _login(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/plans/new/?reset=1")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url("**/plans/new/model/")


def _wait_panel(page) -> None:
    """Wait until the live side panel has been refreshed by the engine."""
    # Locators, not wait_for_function: the CSP (rightly) forbids the eval it needs.
    page.wait_for_selector("#side-panel[data-refreshed]:not([aria-busy])")


def _next(page, expect: str) -> None:
    page.click("button.primary[name=action]")
    page.wait_for_url(f"**/plans/new/{expect}/")


def _check_result_page(page) -> None:
    page.wait_for_selector("[data-testid=recommendation]", state="attached")
    # Plan vs reality arrives after the page: the placeholder is replaced by the section.
    page.wait_for_selector("section.plan-reality:not([data-reality-url])")
    _wait_charts(page)
    charts = page.locator(".chart[data-figure]")
    assert charts.count() >= 4
    for i in range(charts.count()):
        assert charts.nth(i).locator(".main-svg").count() >= 1


def _wait_charts(page) -> None:
    from playwright.sync_api import expect

    # The plan page folds its details; a chart is drawn when its fold opens (toggle event).
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.wait_for_selector(".chart[data-rendered=true]")
    expect(page.locator(".chart[data-figure]:not([data-rendered=true])")).to_have_count(0)


def _download_archive(page) -> dict[str, str]:
    with page.expect_download() as info:
        page.click("[data-testid=download-configs]")
    path = info.value.path()
    with zipfile.ZipFile(io.BytesIO(Path(path).read_bytes())) as archive:
        return {name.split("/", 1)[1]: archive.read(name).decode() for name in archive.namelist()}


def test_wizard_s1_from_an_empty_browser(page, live_server, planner):
    # Given an empty browser, when the planner signs in through the login page
    _login(page, live_server, planner.username)
    _shot(page, "step1-model")

    # Step 1: the 70B dense model
    page.select_option("#id_model", "llama-3.1-70b")
    _next(page, "precision")

    # Step 2: INT8 weights; the side panel recomputes as the answer changes
    page.check("input[name=weight_dtype][value=int8]")
    _wait_panel(page)
    assert "GiB" in page.inner_text("#side-panel")
    page.fill("#id_max_model_len", "8192")
    _shot(page, "step2-precision")
    _next(page, "load")

    # Step 3: load
    page.fill("#id_concurrency", "32")
    _shot(page, "step3-load")
    _next(page, "machines")

    # Step 4: the two A800 nodes of the demo fleet
    page.check("input[name=source][value=machines]")
    page.check("input[name=machines][value=a800-01]")
    page.check("input[name=machines][value=a800-02]")
    _wait_panel(page)
    _shot(page, "step4-machines")
    _next(page, "operations")

    # Back and forward keep the answers
    page.click("button[name=action][value=back]")
    page.wait_for_url("**/plans/new/machines/")
    assert page.is_checked("input[name=machines][value=a800-02]")
    _next(page, "operations")

    # Step 5: the for/against-Ray questions, each with its why
    assert page.locator(".question .why").count() == 7
    page.check("#id_gateway_available")
    _shot(page, "step5-operations")
    page.click("button.primary[name=action][value=finish]")
    page.wait_for_url("**/plans/*-*-*-*-*/")

    # Then: Route A, a replica inside each node, behind Nginx; every chart rendered
    _check_result_page(page)
    recommendation = page.text_content("[data-testid=recommendation]")
    assert "Route A" in recommendation
    assert "TP8" in recommendation or "TP4" in recommendation
    assert "nginx" in recommendation
    _shot_sections(page, "result-s1")
    plan_url = page.url

    # What if the nodes had 400 Gb InfiniBand?
    page.select_option("#id_link", "ib400")
    page.click(".what-if-form button[type=submit]")
    page.wait_for_url("**/what-if/**")
    _check_result_page_what_if(page)
    _shot_sections(page, "what-if-s1")

    # The config archive holds the launch scripts and every config file
    page.goto(plan_url)
    files = _download_archive(page)
    assert {"README.md", "nginx.conf", ".env", "launch-a800-01.sh", "launch-a800-02.sh"} <= set(
        files
    )
    assert "NCCL_SOCKET_IFNAME=eth1" in files[".env"]
    assert "least_conn" in files["nginx.conf"]
    assert "vllm serve" in files["launch-a800-01.sh"]

    assert page.errors == []
    assert _csp_violations(page) == []


def _check_result_page_what_if(page) -> None:
    page.wait_for_selector("[data-testid=right-recommendation]")
    _wait_charts(page)
    assert page.locator(".chart[data-rendered=true]").count() == 8
    assert page.locator("tr[data-changed=true], tr.changed").count() >= 1


def test_wizard_s2b_72b_at_64k_context(page, live_server, planner):
    # Given Qwen2.5-72B from the catalog (32K native, 128K with YaRN)
    _login(page, live_server, planner.username)
    page.select_option("#id_model", "qwen2.5-72b")
    _next(page, "precision")

    # Step 2: BF16 at 64K; the field says the model's limit until YaRN extends it
    page.check("input[name=weight_dtype][value=bf16]")
    page.fill("#id_max_model_len", "65536")
    page.fill("#id_gpu_memory_utilization", "1.5")
    _next_expect_error(page, "#id_max_model_len_error")
    assert "32768" in page.inner_text("#id_max_model_len_error")
    assert page.get_attribute("#id_gpu_memory_utilization", "aria-invalid") == "true"
    assert "at most 1" in page.inner_text("#id_gpu_memory_utilization_error")
    _shot(page, "step2-precision-errors")
    page.fill("#id_gpu_memory_utilization", "0.9")
    page.select_option("#id_rope_scaling_factor", "4")
    _shot(page, "step2-precision-s2b")
    _next(page, "load")

    page.fill("#id_concurrency", "16")
    page.fill("#id_avg_input_tokens", "1200")
    page.fill("#id_avg_output_tokens", "512")
    _next(page, "machines")

    page.check("input[name=source][value=pool]")
    page.select_option("#id_pool", "a100-pool")
    _next(page, "operations")
    page.click("button.primary[name=action][value=finish]")
    page.wait_for_url("**/plans/*-*-*-*-*/")

    # Then: one instance over both nodes, TP4 × PP2, with the network warning
    _check_result_page(page)
    recommendation = page.text_content("[data-testid=recommendation]")
    assert "Route B" in recommendation
    assert "TP4×PP2" in recommendation
    reasons = page.inner_text(".reasons")
    assert "25 Gb/s" in reasons
    assert "V0" in reasons  # the article's OOM was vLLM V0
    _shot_sections(page, "result-s2b")

    files = _download_archive(page)
    assert {"README.md", ".env", "launch-a100-01.sh", "launch-a100-02.sh"} <= set(files)
    assert "yarn" in files["launch-a100-01.sh"]
    assert "--nnodes" in files["launch-a100-01.sh"] or "ray start" in files["launch-a100-01.sh"]

    assert page.errors == []
    assert _csp_violations(page) == []


def _next_expect_error(page, selector: str) -> None:
    page.click("button.primary[name=action]")
    page.wait_for_selector(selector)


def test_wizard_works_without_javascript(browser, live_server, planner, fleet):
    """Progressive enhancement: every step is a plain form; only the live refresh needs JS."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        _login(page, live_server, planner.username)
        # Without JS every fieldset shows, and the side panel is rendered by the server.
        assert page.is_visible("#id_config_json")
        assert "Weights per GPU" in page.inner_text("#side-panel")
        page.select_option("#id_model", "llama-3.1-70b")
        _next(page, "precision")
        page.check("input[name=weight_dtype][value=int8]")
        # "Update the live check" re-renders the step with the new answers.
        page.click("button[name=action][value=refresh]")
        assert "8.5 GiB" in page.inner_text("#side-panel")
        _next(page, "load")
        _next(page, "machines")
        page.check("input[name=source][value=pool]")
        page.select_option("#id_pool", "a800-pool")
        _next(page, "operations")
        page.click("button.primary[name=action][value=finish]")
        page.wait_for_url("**/plans/*-*-*-*-*/")
        assert "Route A" in page.text_content("[data-testid=recommendation]")
    finally:
        context.close()
