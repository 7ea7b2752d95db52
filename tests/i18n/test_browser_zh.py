"""The planning wizard end to end in Chinese, in real headless Chromium.

The planner switches to 中文 with the header's language switcher, plans DOMAIN.md S1 through
the five wizard steps and reads a Chinese result: route, reasons citing the source articles,
chart titles, the pitfalls checklist. A fresh browser then gets Chinese straight away (the
choice is remembered for the user).
"""

import os
import re
from pathlib import Path

import pytest

from tests.i18n.pseudo import english_words
from tests.planner.fleet import build_demo_fleet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-for-tests-1"
CJK = re.compile(r"[\u4e00-\u9fff]")
SCREENSHOTS = Path(os.environ.get("SERVEPLAN_SCREENSHOTS", "/tmp/serveplan-wizard")) / "zh"


@pytest.fixture(autouse=True)
def role_groups(transactional_db):
    """Recreate the role groups: a transactional test flushes what migrations created."""
    from django.contrib.auth.models import Group

    for name in ("viewer", "planner", "admin"):
        Group.objects.get_or_create(name=name)


@pytest.fixture
def fleet(transactional_db):
    return build_demo_fleet()


def _context(browser):
    """A fresh English-speaking browser: no cookies, Accept-Language en-US."""
    context = browser.new_context(
        locale="en-US", accept_downloads=True, viewport={"width": 1360, "height": 900}
    )
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(f"pageerror: {exc}"))
    page.set_default_timeout(15_000)
    return context, page


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-top.png"))


def _login(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/plans/new/?reset=1")
    page.wait_for_url("**/accounts/login/**")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url("**/plans/new/model/")


def _next(page, expect: str) -> None:
    page.click("button.primary[name=action]")
    page.wait_for_url(f"**/plans/new/{expect}/")


def _wait_panel(page) -> None:
    page.wait_for_selector("#side-panel[data-refreshed]:not([aria-busy])")


def _chinese(text: str) -> None:
    assert CJK.search(text), text
    assert english_words(text) == [], text


def test_wizard_in_chinese_end_to_end(browser, live_server, planner, fleet):
    from playwright.sync_api import expect

    context, page = _context(browser)
    _login(page, live_server, planner.username)
    assert page.get_attribute("html", "lang") == "en"
    assert "1. Which model will you serve?" in page.inner_text("main")

    # The header's switcher: choosing 中文 reloads the same step in Chinese
    page.select_option("#language-select", "zh-hans")
    page.wait_for_load_state("load")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    assert page.url.endswith("/plans/new/model/")
    _chinese(page.inner_text(".mainnav"))
    assert "1. 要部署哪个模型？" in page.inner_text("main")
    _shot(page, "step1-model")

    # Step 1: the 70B dense model of DOMAIN.md S1
    page.select_option("#id_model", "llama-3.1-70b")
    _next(page, "precision")

    # Step 2: INT8 weights, 8K context; the live check answers in Chinese
    assert "2. 精度与上下文" in page.inner_text("main")
    page.check("input[name=weight_dtype][value=int8]")
    _wait_panel(page)
    panel = page.inner_text("#side-panel")
    assert "每卡" in panel
    assert "GiB" in panel
    page.fill("#id_max_model_len", "8192")
    _shot(page, "step2-precision")
    _next(page, "load")

    # Step 3: load
    assert "3. 负载有多大？" in page.inner_text("main")
    page.fill("#id_concurrency", "32")
    _next(page, "machines")

    # Step 4: the two A800 nodes
    assert "4. 使用哪些机器？" in page.inner_text("main")
    page.check("input[name=source][value=machines]")
    page.check("input[name=machines][value=a800-01]")
    page.check("input[name=machines][value=a800-02]")
    _wait_panel(page)
    _next(page, "operations")

    # Step 5: every for/against-Ray question and its why is in Chinese
    assert "5. 打算怎么运行？" in page.inner_text("main")
    whys = page.locator(".question .why")
    assert whys.count() == 7
    for i in range(whys.count()):
        _chinese(whys.nth(i).inner_text())
    page.check("#id_gateway_available")
    _shot(page, "step5-operations")
    page.click("button.primary[name=action][value=finish]")
    page.wait_for_url("**/plans/*-*-*-*-*/")

    # The result: route, reasons with their source articles, charts, pitfalls, all Chinese
    page.wait_for_selector("[data-testid=recommendation]", state="attached")
    recommendation = page.text_content("[data-testid=recommendation]")
    assert "路线 A" in recommendation
    assert "nginx" in recommendation
    # The reasons, charts and configs are folded details.
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    reasons = page.inner_text(".reasons")
    # Each reason cites its sources as footnotes; the footnotes name the rule in Chinese and
    # the public pages behind it (their titles stay as the pages write them).
    assert page.locator(".reasons sup.footnote-ref").count() >= 1
    assert "docs.vllm.ai" in page.inner_html(".sources")
    assert "路线" in page.inner_text(".sources") or "三条路线" in page.inner_text(".sources")
    assert "张量并行" in reasons or "TP" in reasons
    for item in page.locator(".reasons > li").all():
        _chinese(item.inner_text())
    page.wait_for_selector(".chart[data-rendered=true]")
    expect(page.locator(".chart[data-figure]:not([data-rendered=true])")).to_have_count(0)
    titles = page.locator(".chart-title")
    assert titles.count() >= 4
    for i in range(titles.count()):
        _chinese(titles.nth(i).inner_text())
    # Axis titles are drawn by Plotly inside the SVG, from the server's translated layout
    axis_titles = [t.text_content() for t in page.locator(".chart .xtitle, .chart .ytitle").all()]
    assert axis_titles
    assert any(CJK.search(t or "") for t in axis_titles), axis_titles
    for item in page.locator(".pitfalls > li").all():
        _chinese(item.inner_text())
    _shot(page, "result-s1")
    plan_url = page.url
    assert page.errors == []
    context.close()

    # A new browser (English Accept-Language) gets Chinese at once: the choice is remembered
    context, page = _context(browser)
    page.goto(plan_url)
    page.wait_for_url("**/accounts/login/**")
    assert page.get_attribute("html", "lang") == "en"
    page.fill("input[name=username]", planner.username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(plan_url)
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    assert "路线 A" in page.text_content("[data-testid=recommendation]")
    assert page.errors == []
    context.close()


def test_monitoring_charts_speak_chinese(browser, live_server, admin_user):
    """Chart titles from the server, and Plotly's own texts: date ticks and modebar tooltips."""
    from playwright.sync_api import expect

    from tests.i18n.world import build_world

    world = build_world(admin_user)
    context, page = _context(browser)
    page.goto(f"{live_server.url}/accounts/login/")
    page.select_option("#language-select", "zh-hans")
    page.wait_for_load_state("load")
    page.fill("input[name=username]", admin_user.username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/monitoring/targets/{world['vllm_target'].pk}/")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")

    drawn = page.locator("[data-chart][data-points]:not([data-points='0'])").first
    drawn.wait_for()
    # The card's caption names the chart (the plot repeats no title), in Chinese.
    _chinese(drawn.locator("figcaption").text_content() or "")
    assert drawn.locator(".gtitle").count() == 0
    # Six minutes of samples on the default 1 h range: the axis starts near the first sample
    # instead of squeezing the data into the last tenth of the chart.
    first, start, end = drawn.locator(".chart-plot").evaluate(
        """plot => {
          const xs = plot.data.flatMap(t => t.x.map(x => new Date(x).getTime()));
          const r = plot.layout.xaxis.range.map(x => new Date(x).getTime());
          return [Math.min(...xs), r[0], r[1]];
        }"""
    )
    assert start <= first
    assert first - start <= 0.1 * (end - start)
    ticks = " ".join(t.text_content() or "" for t in drawn.locator(".xtick text").all())
    assert ticks
    assert not re.search(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b", ticks), ticks
    drawn.hover()
    buttons = drawn.locator(".modebar-btn[data-title]")
    assert buttons.count() > 0
    titles = [buttons.nth(i).get_attribute("data-title") for i in range(buttons.count())]
    assert all(CJK.search(t or "") for t in titles), titles
    _shot(page, "monitoring-vllm")
    assert page.errors == []
    context.close()
