"""Every page at a phone's 390 px and a laptop's 1400 px, in one headless Chromium (issue 30):

- the page never scrolls sideways;
- a table wider than its card sits in a scroll container of its own;
- no text names the repository's internals ("DOMAIN §", "issue 13", "article 000",
  "the 002 article"): a reader cites what they can open.

The pages are the pseudo-locale sweep's (tests/i18n/test_pseudo_locale.py), with the same
sample data (tests/i18n/world.py), so a new page is checked here as soon as it is listed there.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.browser import CSP_PROBE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = ((390, 844), (1400, 900))
# Repository internals a shared page must not name; "vLLM issue 49224" or "PR 36720" name
# public vLLM threads a reader can open, and stay allowed.
INTERNAL = re.compile(
    r"DOMAIN(\.md)? ?§|(?<!vLLM )\bissue \d+\b|\barticle 00\d\b|\bthe 00\d article|文章 00\d",
    re.IGNORECASE,
)
# Measures the page: sideways overflow, and tables wider than their card with no element in
# between that scrolls sideways (a scroll container of their own).
MEASURE = """() => {
  // A fragment a page's script fetches (no <main>) is laid out by the page that takes it in.
  if (!document.querySelector('main, .dr-print')) {
    return {page: 0, clipped: [], reality: 0, out: [], text: document.body.innerText};
  }
  const page = document.documentElement.scrollWidth - window.innerWidth;
  const clipped = [];
  for (const table of document.querySelectorAll('table')) {
    if (!table.offsetParent) { continue; }  // folded away or hidden
    const card = table.closest('.card, main');
    if (!card) { continue; }
    const width = table.getBoundingClientRect().width;
    if (width <= card.clientWidth + 1) { continue; }
    let scrolls = false;
    for (let el = table.parentElement; el && el !== card.parentElement; el = el.parentElement) {
      const overflow = getComputedStyle(el).overflowX;
      const own = el.clientWidth <= card.clientWidth + 1;
      if ((overflow === 'auto' || overflow === 'scroll') && own) {
        scrolls = true; break;
      }
    }
    if (!scrolls && getComputedStyle(table).overflowX !== 'auto') {
      const head = table.querySelector('th, td');
      clipped.push(Math.round(width) + ' px in ' + card.clientWidth + ' px: '
        + (head ? head.textContent.trim().slice(0, 40) : table.className));
    }
  }
  // What sticks out: the outermost elements past the right edge, to name in the report.
  const out = [];
  if (page > 1) {
    for (const el of document.body.querySelectorAll('*')) {
      const box = el.getBoundingClientRect();
      const parent = el.parentElement.getBoundingClientRect();
      if (box.right > window.innerWidth + 1 && parent.right <= window.innerWidth + 1) {
        const name = el.className ? '.' + String(el.className).split(' ')[0] : '';
        out.push(el.tagName.toLowerCase() + name + ' (' + Math.round(box.width) + ' px)');
      }
    }
  }
  // Plan vs reality on a target page needs no sideways scrolling on a laptop.
  const reality = [...document.querySelectorAll('.plan-comparison .table-wrap')]
    .filter(w => w.offsetParent && w.scrollWidth > w.clientWidth + 1).length;
  return {page, clipped, reality, out: out.slice(0, 3), text: document.body.innerText};
}"""


def _urls(world) -> list[str]:
    from tests.i18n.test_pseudo_locale import _pages

    return [url for urls in _pages(world).values() for url in urls]


@pytest.fixture
def world(transactional_db, admin_user):
    from django.contrib.auth.models import Group

    from tests.i18n.world import build_world

    for name in ("viewer", "planner", "admin"):
        Group.objects.get_or_create(name=name)
    world = build_world(admin_user)
    # A server linked to a plan: its page shows plan vs reality.
    target = world["vllm_target"]
    target.plan = world["plan"]
    target.save(update_fields=["plan"])
    return world


def _problems(page, url: str, width: int) -> list[str]:
    found = page.evaluate(MEASURE)
    where = f"{width} px {url}"
    out = []
    if found["page"] > 1:
        wide = ", ".join(found["out"])
        out.append(f"{where}: the page scrolls sideways by {found['page']} px ({wide})")
    out += [f"{where}: table {t} with no scroll container" for t in found["clipped"]]
    if width >= 1400 and found["reality"]:
        out.append(f"{where}: plan vs reality is clipped (it scrolls sideways in its card)")
    out += [
        f"{where}: names an internal reference {m.group(0)!r}"
        for m in INTERNAL.finditer(found["text"])
    ]
    return out


def test_no_page_scrolls_sideways_clips_a_table_or_names_internals(
    browser, live_server, admin_user, world
):
    client = Client()
    client.force_login(admin_user)
    problems: list[str] = []
    urls = _urls(world)
    assert len(urls) > 60
    for width, height in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": height})
        context.add_init_script(CSP_PROBE)
        context.add_cookies(
            [
                {
                    "name": "sessionid",
                    "value": client.cookies["sessionid"].value,
                    "url": live_server.url,
                }
            ]
        )
        page = context.new_page()
        page.set_default_timeout(20_000)
        try:
            for url in urls:
                page.goto(live_server.url + url, wait_until="load")
                problems += _problems(page, url, width)
        finally:
            context.close()
    assert problems == [], "\n".join(problems)
