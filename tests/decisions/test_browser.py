"""Record a decision from a plan's result page and accept it, in real headless Chromium."""

import os
from pathlib import Path

import pytest

from tests.browser import CSP_PROBE
from tests.decisions.conftest import S1_ENGINE_SPEC, THRESHOLDS, engine_result, plan_from_result

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = os.environ.get("SERVEPLAN_SCREENSHOTS", "")
PASSWORD = "pw-for-tests-1"


@pytest.fixture
def planner_user(transactional_db, django_user_model):
    """A planner; the role groups are recreated because a transactional test flushes them."""
    from django.contrib.auth.models import Group

    for name in ("viewer", "planner", "admin"):
        Group.objects.get_or_create(name=name)
    user = django_user_model.objects.create_user(username="pat-planner", password=PASSWORD)
    user.groups.add(Group.objects.get(name="planner"))
    return user


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.add_init_script(CSP_PROBE)
    page = context.new_page()
    page.errors = []

    def on_console(msg) -> None:
        if msg.type == "error" and not msg.location.get("url", "").endswith("/favicon.ico"):
            page.errors.append(f"console: {msg.text} at {msg.location}")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: page.errors.append(f"pageerror: {exc}"))
    page.set_default_timeout(15_000)
    yield page
    context.close()


def _shot(page, name: str) -> None:
    """Save a full-page screenshot when SERVEPLAN_SCREENSHOTS names a directory."""
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"decision-{name}.png"), full_page=True)


def _clean(page) -> None:
    assert page.errors == []
    assert page.evaluate("window.__cspViolations || []") == []


def test_record_a_decision_from_a_plan_and_accept_it(page, live_server, planner_user):
    from planner.decisions.models import DecisionRecord

    plan = plan_from_result(
        engine_result(S1_ENGINE_SPEC),
        author=planner_user,
        spec=S1_ENGINE_SPEC,
        pool_kind="dedicated",
        title="S1 in the browser",
    )

    # Sign in, landing on the plan's result page.
    page.goto(f"{live_server.url}{plan.get_absolute_url()}")
    assert "/login/" in page.url
    page.fill("input[name=username]", "pat-planner")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(f"**{plan.get_absolute_url()}")

    # The plan page links to the decision form, which arrives prefilled.
    page.get_by_role("link", name="Record this decision").click()
    page.wait_for_url(f"**/decisions/new/from-plan/{plan.public_id}/")
    # The plan knows no platform: nobody is named, and what to confirm is marked.
    assert page.input_value("#id_resp_allocation_owner") == ""
    assert "To confirm:" in page.input_value("#id_resp_allocation_mechanism")
    assert "Keep mp" in page.input_value("#id_verifiable_sentence")
    dedicated = page.locator('[data-kind=allocation] .dr-guidance[data-pool="dedicated"]')
    shared = page.locator('[data-kind=allocation] .dr-guidance[data-pool="shared"]')
    assert dedicated.is_visible()
    assert not shared.is_visible()
    # The guidance beside each row follows the pool kind (static JS, no inline script).
    page.select_option("#id_pool_kind", "shared")
    assert shared.is_visible()
    assert not dedicated.is_visible()
    page.select_option("#id_pool_kind", "dedicated")
    _shot(page, "form")
    # The plan names no people: who judges Ray's benefit and who proves the choice are left
    # for the team to fill in.
    assert page.input_value("#id_resp_ray_benefit_owner") == ""
    assert page.input_value("#id_resp_proof_owner") == ""
    page.fill("#id_resp_ray_benefit_owner", "pat-planner")
    page.fill("#id_resp_proof_owner", "Platform team")
    for kind in ("allocation", "workers", "recovery"):  # what the team confirmed
        page.fill(f"#id_resp_{kind}_owner", "Platform team")

    for kind, threshold in THRESHOLDS.items():
        page.fill(f"#id_ev_{kind}_threshold", str(threshold))
    page.fill("#id_ev_ttft_p95_measured_value", "310")
    page.fill("#id_ev_ttft_p95_note", "locust, 32 concurrent, 30 min")
    page.click("#dr-save")
    page.wait_for_url("**/decisions/1/")
    assert page.locator("#dr-sentence").inner_text().startswith("Keep mp")
    _clean(page)

    # Accepting needs the explicit flag: five measurements are still missing.
    _shot(page, "detail-proposed")
    page.click("#dr-accept")
    page.wait_for_url("**/decisions/1/accept/")
    page.click("#dr-accept-submit")
    assert page.locator("#dr-refused").is_visible()
    assert "has no measurement" in page.locator("#dr-refused").inner_text()
    # The refusal answers 400, which Chromium logs; that one is expected, nothing else is.
    assert len(page.errors) == 1
    assert "status of 400" in page.errors[0]
    assert "/decisions/1/accept/" in page.errors[0]
    page.errors.clear()
    page.check("input[name=with_open_evidence]")
    page.click("#dr-accept-submit")
    page.wait_for_url("**/decisions/1/")

    assert page.locator(".dr-status-accepted").first.is_visible()
    assert page.locator(".dr-banner.dr-open").is_visible()
    _shot(page, "detail-accepted")
    # The printable view and the list show the same record, also without script errors.
    page.goto(f"{live_server.url}/decisions/1/print/")
    assert page.locator("#dr-title").inner_text().startswith("Serve ")
    _shot(page, "print")
    page.goto(f"{live_server.url}/decisions/?status=accepted")
    assert page.locator("table.dr-list tbody tr").count() == 1
    _shot(page, "list")
    decision = DecisionRecord.objects.get(number=1)
    assert decision.status == "accepted"
    assert decision.accepted_with_open_evidence
    assert decision.plan == plan
    assert decision.evidence_items.get(kind="ttft_p95").passed is True
    _clean(page)
