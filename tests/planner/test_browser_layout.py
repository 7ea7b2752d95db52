"""The result page at 1440 px (a team lead's laptop) and 390 px (a phone): nothing is clipped
sideways; at 1440 px even the layouts table fits without scrolling."""

import pytest
from django.test import Client

from planner.services import plan_create
from tests.browser import CSP_PROBE
from tests.planner.fleet import build_demo_fleet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUTE_A = {
    "model": "qwen2.5-32b",
    "weight_dtype": "bf16",
    "max_model_len": 8192,
    "workload": {
        "concurrency": 32,
        "avg_input_tokens": 1200,
        "avg_output_tokens": 512,
        "ttft_slo_ms": 2000,
        "itl_slo_ms": 60,
    },
    "hardware": {"hostnames": ["a100-01", "a100-02"]},
}
OVERFLOW = """() => {
  const page = document.documentElement.scrollWidth - window.innerWidth;
  const tables = [...document.querySelectorAll('.table-wrap')]
    .filter(w => w.scrollWidth > w.clientWidth + 1).length;
  return {page, tables};
}"""


@pytest.fixture
def plan_url(transactional_db, planner):
    from django.contrib.auth.models import Group

    for name in ("viewer", "planner", "admin"):
        Group.objects.get_or_create(name=name)
    build_demo_fleet()
    return plan_create(spec=ROUTE_A, actor=planner).get_absolute_url()


def _open(browser, live_server, planner, url: str, width: int, height: int):
    client = Client()
    client.force_login(planner)
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script(CSP_PROBE)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    page.goto(live_server.url + url)
    page.wait_for_selector("[data-testid=verdict]")
    return context, page


def test_the_first_screen_answers_ray_and_shows_the_layout_numbers(
    browser, live_server, planner, plan_url
):
    # A team lead at 1400 × 900 reads "Do we need Ray?" and the recommended layout's copies,
    # speed with its band and capacity without scrolling; the page is short before unfolding.
    context, page = _open(browser, live_server, planner, plan_url, 1400, 900)
    try:
        for testid in ("ray-answer", "fact-copies", "fact-machines", "fact-tok-s", "fact-capacity"):
            box = page.locator(f"[data-testid={testid}]").bounding_box()
            assert box is not None, testid
            assert box["y"] + box["height"] <= 900, f"{testid} is below the first screen"
        answer = page.locator("[data-testid=ray-answer] .ray-line").inner_text()
        assert answer.startswith(("No:", "Yes:"))
        assert "(±" in page.locator("[data-testid=fact-tok-s]").inner_text()
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height < 6000, f"the plan page is {height} px tall before unfolding"
        # Charts are folded; opening them draws them at full width.
        page.locator("[data-testid=charts] > summary").click()
        page.wait_for_selector(".chart[data-rendered=true]")
        assert page.locator(".chart[data-rendered=true]").first.bounding_box()["width"] > 300
    finally:
        context.close()


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
def test_result_page_has_no_horizontal_overflow(
    browser, live_server, planner, plan_url, width, height
):
    context, page = _open(browser, live_server, planner, plan_url, width, height)
    try:
        # Unfolded, every table must still fit or scroll in its box.
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        overflow = page.evaluate(OVERFLOW)
        assert overflow["page"] <= 0, f"the page scrolls sideways by {overflow['page']} px"
        if width >= 1440:
            assert overflow["tables"] == 0, "a table is clipped at 1440 px"
        assert page.locator("[data-testid=slo-checks] tr").count() == 3  # head + TTFT + ITL
        assert page.locator("[data-testid=routes] article").count() == 3
        assert page.evaluate("window.__cspViolations") == []
    finally:
        context.close()
