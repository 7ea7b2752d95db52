"""The "several models" wizard in real headless Chromium: from signing in to the pool's bundle."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest

# The wizard's browser fixtures: a signed-out context that keeps console errors, the demo fleet.
from tests.planner.test_browser import (  # noqa: F401 - fixtures used by name
    PASSWORD,
    fleet,
    page,
    role_groups,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_three_models_on_the_a800_pool_from_the_wizard_to_the_bundle(
    page,  # noqa: F811 - the fixture imported above
    live_server,
    planner,
):
    from playwright.sync_api import expect

    # Given a planner who opens the several-models wizard from the pool plans page
    page.goto(f"{live_server.url}/plans/pools/")
    page.fill("input[name=username]", planner.username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url("**/plans/pools/")
    page.click("[data-testid=pool-wizard-link]")
    page.wait_for_url("**/plans/pools/new/")

    # When they pick the inventory pool and three models, one with a TTFT SLO
    page.check("input[name=source][value=pool]")
    page.select_option("select[name=pool]", "a800-pool")
    rows = (
        ("llama-3.1-70b", "chat", "8"),
        ("llama-3.1-8b", "router", "5"),
        ("qwen2.5-7b", "code", "3"),
    )
    for i, (model, name, priority) in enumerate(rows):
        page.select_option(f"select[name=models-{i}-model]", model)
        page.fill(f"input[name=models-{i}-name]", name)
        page.fill(f"input[name=models-{i}-priority]", priority)
    page.locator("details", has_text="SLOs and a pinned layout").first.locator("summary").click()
    page.fill("input[name=models-0-ttft_slo_ms]", "3000")
    page.click("[data-testid=pool-create]")

    # Then the pool result shows every model on the GPU map, with its card
    page.wait_for_url("**/plans/pools/*-*/")
    expect(page.locator("table.pool-map")).to_be_visible()
    for _model, name, _priority in rows:
        expect(page.locator("table.pool-map", has_text=name)).to_have_count(1)
        expect(page.locator("article.pool-card", has_text=name)).to_have_count(1)

    # And the recommended route's bundle downloads, with a file naming each model
    with page.expect_download() as info:
        page.click("[data-testid=pool-bundle-recommended]")
    with zipfile.ZipFile(io.BytesIO(Path(info.value.path()).read_bytes())) as archive:
        files = {name: archive.read(name).decode() for name in archive.namelist()}
    names = {Path(n).name for n in files}
    assert {"README.md", "site.yml"} <= names, sorted(names)
    text = "\n".join(files.values())
    for _model, name, _priority in rows:
        assert name in text

    # And "what if" without the code model shows it leaving, the others kept, and saves it
    pool_url = page.url
    page.select_option("select[name=remove_model]", "code")
    page.click("form.what-if-form button[type=submit]")
    page.wait_for_url("**/what-if/?*")
    models = page.locator("[data-testid=pool-diff-models]")
    expect(models.locator("tr.changed", has_text="code")).to_have_count(1)
    expect(models.locator("tr", has_text="not in this pool")).to_have_count(1)
    expect(page.locator("table.pool-map", has_text="code")).to_have_count(0)
    page.click("text=Save as a new pool plan")
    page.wait_for_url("**/plans/pools/*-*/")
    assert page.url != pool_url
    expect(page.locator("h1")).to_contain_text("what if without code")

    # And a decision record from the saved pool: prefilled with the route, linked back to it
    saved_pool = page.url
    page.click("[data-testid=pool-record-decision]")
    page.wait_for_url("**/decisions/new/from-pool-plan/*/")
    expect(page.locator("textarea[name=decision_text]")).to_have_value(re.compile("LiteLLM"))
    page.click("#dr-save")
    page.wait_for_url("**/decisions/*/")
    expect(page.locator(f"a[href='{saved_pool.removeprefix(live_server.url)}']")).to_have_count(1)
    assert page.errors == []
