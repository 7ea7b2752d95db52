"""Every page, rendered in a pseudo-locale, shows no English outside ⟦…⟧ markers.

The pseudo catalog (tests/i18n/pseudo.py) translates every msgid of our catalog (and of
Django's) to "⟦msgid⟧". A string that reaches a page without gettext has no markers; any
English word left after removing the marked spans is a string nobody marked for translation.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import translation

from tests.i18n.pseudo import english_words, unmarked_fragments, visible_text
from tests.i18n.world import build_world

pytestmark = pytest.mark.django_db

# URL names not rendered as HTML pages here, and why.
NOT_PAGES = {
    "set_language": "POST-only language switch",
    "logout": "POST-only",
    "account-token-revoke": "POST-only",
    "healthz": "JSON health check for load balancers",
    "ops-metrics": "Prometheus text exposition for scrapers",
    "favicon": "an icon",
    "audit-log-csv": "CSV download of the audit log (data, not interface)",
    "inventory:machine-export": "CSV/YAML download of machines (data, not interface)",
    "inventory:demo-remove": "POST-only, redirects to the machine list",
    "planner:plan-export": "checked by test_exports_are_translated",
    "planner:plan-rerun": "POST-only, redirects",
    "planner:pool-plan-bundle": "ZIP download of a pool plan's bundle (files, not interface)",
    "decisions:accept": "POST-only form handled on the detail page",
    "decisions:reject": "POST-only",
    "decisions:successor": "POST-only, redirects",
    "decisions:export-markdown": "checked by test_exports_are_translated",
    "monitoring:target-evidence": "POST-only, redirects to the target page",
    "planner:wizard-start": "redirects to the first step (rendered as wizard-step)",
    "login": "anonymous page: checked by test_login_page_is_marked",
    "monitoring:overview-tiles": "fragment of the overview (rendered inside it)",
    "monitoring:allowlist-delete": "POST-only, redirects to the allowlist",
    "monitoring:allowed-job-create": "POST-only, redirects to the allowlist (errors: its page)",
    "monitoring:allowed-job-delete": "POST-only, redirects to the allowlist",
    "monitoring:machines-register": "POST-only, redirects to the Machines page",
    "monitoring:calibration-fit": "POST-only: its preview is checked in test_calibration_profiles",
    "monitoring:calibration-replan": "POST-only, redirects to the new plan",
    "user-reset-link": "POST-only: shows a one-time link (tests/core/test_accounts.py)",
    "password_reset_confirm": "anonymous page reached through an admin's reset link",
    "password_reset_complete": "anonymous page after a reset",
    "benchmarks:progress": "JSON the run page polls",
    "benchmarks:cancel": "POST-only, redirects to the run",
    "benchmarks:calibrate": "POST-only, redirects to the new calibration profile",
    "benchmarks:evidence": "POST-only, redirects to the decision",
    "benchmarks:export": "JSON/CSV download of a run (data, not interface)",
}
# The JSON API (its schema and Swagger page) and Django's admin site are not our pages.
NOT_OURS = ("api/", "admin/")


def _url_names() -> set[str]:
    """Return every named URL of the project, namespaced ("app:name")."""
    names: set[str] = set()

    def walk(patterns: list[Any], prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                if str(p.pattern).startswith(NOT_OURS):
                    continue
                ns = f"{prefix}{p.namespace}:" if p.namespace else prefix
                walk(p.url_patterns, ns)
            elif isinstance(p, URLPattern) and p.name:
                names.add(prefix + p.name)

    walk(get_resolver().url_patterns, "")
    return names


def _pages(world: dict[str, Any]) -> dict[str, list[str]]:
    """Return URL name -> the URLs rendered for it (several states for some pages)."""
    m, g, p = world["machine"], world["gpu_type"], world["pool"]
    plan, plan_b, d = world["plan"], world["plan_b"], world["decision"]
    vt, rt, ms = world["vllm_target"], world["ray_target"], world["modelspec"]
    plan_id = {"public_id": plan.public_id}
    num = {"number": d.number}
    steps = ("model", "precision", "load", "machines", "operations")
    return {
        "home": [reverse("home")],
        "account-tokens": [reverse("account-tokens")],
        "audit-log": [reverse("audit-log")],
        "password_change": [reverse("password_change")],
        "user-list": [reverse("user-list")],
        "user-detail": [reverse("user-detail", args=[plan.author_id])],
        "inventory:index": [reverse("inventory:index")],
        "inventory:fleet-summary": [reverse("inventory:fleet-summary")],
        "inventory:gputype-list": [reverse("inventory:gputype-list")],
        "inventory:gputype-create": [reverse("inventory:gputype-create")],
        "inventory:gputype-detail": [reverse("inventory:gputype-detail", args=[g.pk])],
        "inventory:gputype-update": [reverse("inventory:gputype-update", args=[g.pk])],
        "inventory:gputype-delete": [reverse("inventory:gputype-delete", args=[g.pk])],
        "inventory:pool-list": [reverse("inventory:pool-list")],
        "inventory:pool-create": [reverse("inventory:pool-create")],
        "inventory:pool-detail": [reverse("inventory:pool-detail", args=[p.pk])],
        "inventory:pool-update": [reverse("inventory:pool-update", args=[p.pk])],
        "inventory:pool-delete": [reverse("inventory:pool-delete", args=[p.pk])],
        "inventory:machine-list": [reverse("inventory:machine-list")],
        "inventory:machine-create": [reverse("inventory:machine-create")],
        "inventory:machine-import": [reverse("inventory:machine-import")],
        "inventory:machine-import-preview": [],  # filled by the test (needs an upload)
        "inventory:machine-detail": [reverse("inventory:machine-detail", args=[m.pk])],
        "inventory:machine-update": [reverse("inventory:machine-update", args=[m.pk])],
        "inventory:machine-delete": [reverse("inventory:machine-delete", args=[m.pk])],
        "inventory:modelspec-list": [reverse("inventory:modelspec-list")],
        "inventory:modelspec-create": [reverse("inventory:modelspec-create")],
        "inventory:modelspec-import": [reverse("inventory:modelspec-import")],
        "inventory:modelspec-detail": [reverse("inventory:modelspec-detail", args=[ms.pk])],
        "inventory:modelspec-update": [reverse("inventory:modelspec-update", args=[ms.pk])],
        "inventory:modelspec-delete": [reverse("inventory:modelspec-delete", args=[ms.pk])],
        "planner:plan-list": [reverse("planner:plan-list")],
        "planner:wizard-step": [reverse("planner:wizard-step", args=[s]) for s in steps],
        "planner:wizard-preview": [],  # POST: filled by the test
        "planner:plan-compare": [
            reverse("planner:plan-compare") + f"?a={plan.public_id}&b={plan_b.public_id}"
        ],
        "planner:rules": [reverse("planner:rules")],
        "planner:pool-plan-list": [reverse("planner:pool-plan-list")],
        "planner:pool-wizard": [reverse("planner:pool-wizard")],
        "planner:pool-plan-detail": [
            reverse("planner:pool-plan-detail", kwargs={"public_id": world["pool_plan"].public_id})
        ],
        "planner:pool-plan-what-if": [
            reverse("planner:pool-plan-what-if", kwargs={"public_id": world["pool_plan"].public_id})
            + "?remove_model=router&load_model=chat&concurrency=64"
        ],
        "planner:plan-detail": [
            reverse("planner:plan-detail", kwargs=plan_id),
            reverse("planner:plan-detail", kwargs={"public_id": world["plan_shared"].public_id}),
        ],
        "monitoring:plan-reality": [
            reverse("monitoring:plan-reality", kwargs=plan_id),
            reverse(
                "monitoring:plan-reality", kwargs={"public_id": world["plan_shared"].public_id}
            ),
        ],
        "planner:plan-what-if": [
            reverse("planner:plan-what-if", kwargs=plan_id) + "?link=ib400&concurrency=64"
        ],
        "decisions:list": [reverse("decisions:list")],
        "decisions:create": [reverse("decisions:create")],
        "decisions:create-from-plan": [reverse("decisions:create-from-plan", kwargs=plan_id)],
        "decisions:create-from-pool-plan": [
            reverse(
                "decisions:create-from-pool-plan",
                kwargs={"public_id": world["pool_plan"].public_id},
            )
        ],
        "decisions:detail": [
            reverse("decisions:detail", kwargs=num),
            reverse("decisions:detail", kwargs={"number": world["rejected_decision"].number}),
        ],
        "monitoring:decision-reality": [reverse("monitoring:decision-reality", kwargs=num)],
        "monitoring:pool-plan-reality": [
            reverse(
                "monitoring:pool-plan-reality", kwargs={"public_id": world["pool_plan"].public_id}
            )
        ],
        "decisions:edit": [reverse("decisions:edit", kwargs=num)],
        "decisions:supersede": [reverse("decisions:supersede", kwargs=num)],
        "decisions:revisions": [reverse("decisions:revisions", kwargs=num)],
        "decisions:diff": [reverse("decisions:diff", kwargs=num)],
        "decisions:print": [reverse("decisions:print", kwargs=num)],
        "monitoring:overview": [reverse("monitoring:overview")],
        "monitoring:target-list": [reverse("monitoring:target-list")],
        "monitoring:target-create": [reverse("monitoring:target-create")],
        "monitoring:target-detail": [
            reverse("monitoring:target-detail", args=[vt.pk]),
            reverse("monitoring:target-detail", args=[rt.pk]),
            reverse("monitoring:target-detail", args=[world["down_target"].pk]),
        ],
        "monitoring:target-edit": [reverse("monitoring:target-edit", args=[vt.pk])],
        "monitoring:target-delete": [reverse("monitoring:target-delete", args=[vt.pk])],
        "monitoring:target-panels": [
            reverse("monitoring:target-panels", args=[vt.pk]),
            reverse("monitoring:target-panels", args=[rt.pk]),
        ],
        "monitoring:event-list": [reverse("monitoring:event-list")],
        "monitoring:allowlist": [reverse("monitoring:allowlist")],
        "monitoring:machines": [reverse("monitoring:machines")],
        "monitoring:machines-grid": [reverse("monitoring:machines-grid")],
        "monitoring:calibration-list": [reverse("monitoring:calibration-list")],
        "monitoring:calibration-detail": [
            reverse("monitoring:calibration-detail", args=[world["calibration"].public_id])
        ],
        "benchmarks:list": [reverse("benchmarks:list")],
        "benchmarks:detail": [reverse("benchmarks:detail", args=[world["benchmark"].public_id])],
    }


def _figure_texts(html: str) -> list[tuple[str, str]]:
    """Return the titles, axis titles and trace names of the Plotly figures in json_script."""
    found: list[tuple[str, str]] = []
    for blob in re.findall(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>', html, re.S):
        try:
            figure = json.loads(blob)
        except ValueError:
            continue
        if not isinstance(figure, dict) or "layout" not in figure:
            continue
        layout = figure["layout"]
        meta_title = (layout.get("meta") or {}).get("title")
        if isinstance(meta_title, str) and meta_title:
            found.append(("figure meta.title", meta_title))
        for key in ("title", "xaxis", "yaxis"):
            part = layout.get(key) or {}
            title = part.get("title", part) if key != "title" else part
            text = title.get("text") if isinstance(title, dict) else title
            if isinstance(text, str) and text:
                found.append((f"figure {key}", text))
        for trace in figure.get("data", []):
            if trace.get("name"):
                found.append(("figure trace", str(trace["name"])))
        for note in layout.get("annotations", []):
            if note.get("text"):
                found.append(("figure annotation", str(note["text"])))
    return found


def _findings(html: str) -> list[str]:
    problems = []
    for where, text, left in unmarked_fragments(visible_text(html) + _figure_texts(html)):
        words = english_words(left)
        if words:
            problems.append(f"{where}: {' '.join(text.split())[:160]!r} -> {words}")
    return problems


@pytest.fixture
def pseudo_client(client, admin_user, pseudo_locale):
    from django.conf import settings

    client.force_login(admin_user)
    client.raise_request_exception = False  # a crashing page is reported with the others
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = pseudo_locale
    return client


def test_every_page_is_listed():
    pages = set(_pages_stub())
    assert _url_names() - pages - set(NOT_PAGES) == set(), (
        "new URL names: add them to _pages() with sample objects, or to NOT_PAGES with why"
    )


def _pages_stub() -> dict[str, list[str]]:
    class Any_:
        pk = 1
        author_id = 1
        number = 1
        public_id = "00000000-0000-0000-0000-000000000000"

    try:
        return _pages(dict.fromkeys(
            ("machine", "gpu_type", "pool", "plan", "plan_b", "decision", "vllm_target",
             "ray_target", "down_target", "modelspec", "plan_shared", "rejected_decision",
             "calibration", "benchmark", "pool_plan"),
            Any_()))  # fmt: skip
    except Exception:  # pragma: no cover - reverse() of a renamed URL
        raise


def _sweep(client: Any, admin_user: Any, language: str) -> dict[str, list[str]]:
    """Render every page (and some failed form posts) in `language`; return the findings."""
    with translation.override(language):
        world = build_world(admin_user)
    pages = _pages(world)
    _add_stateful_pages(client, pages, admin_user)
    report: dict[str, list[str]] = {}
    for name, urls in sorted(pages.items()):
        for url in urls:
            response = client.get(url, follow=True)
            problems = _findings(response.content.decode())
            if response.status_code != 200:
                problems.insert(0, f"HTTP {response.status_code}")
            if problems:
                report[f"{name} {url}"] = problems
    for url, data in _posted_pages(world):
        response = client.post(url, data)
        problems = _findings(response.content.decode())
        if problems:
            report[f"POST {url}"] = problems
    return report


def _explain(report: dict[str, list[str]], what: str) -> str:
    lines = [f"{page}\n    " + "\n    ".join(sorted(set(p))) for page, p in report.items()]
    return what + "\n" + "\n".join(lines)


def test_every_page_shows_no_unmarked_english(pseudo_client, admin_user, pseudo_locale):
    report = _sweep(pseudo_client, admin_user, pseudo_locale)

    assert not report, _explain(report, "English outside ⟦⟧ (not marked for translation):")


def test_every_page_reads_in_chinese(client, admin_user):
    """The same sweep in zh-hans: catches untranslated third-party strings and stale .mo files."""
    from django.conf import settings

    client.force_login(admin_user)
    client.raise_request_exception = False
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"

    report = _sweep(client, admin_user, "zh-hans")

    assert not report, _explain(report, "English prose on Chinese pages:")


def _add_stateful_pages(client: Any, pages: dict[str, list[str]], admin_user: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from core.models import ApiToken
    from inventory import bulk

    ApiToken.issue(user=admin_user, name="ci-01")
    header = ",".join(bulk.CSV_COLUMNS)
    row = {c: "" for c in bulk.CSV_COLUMNS}
    row.update(
        hostname="gpu-77", gpu_type="a800-80g-sxm", gpu_count="8", interconnect="nvlink",
        pool="a800-pool", status="active", nics="eth1 25 ethernet data",
    )  # fmt: skip
    bad = {**row, "hostname": "gpu-78", "gpu_count": "99"}
    content = "\n".join([header, ",".join(row.values()), ",".join(bad.values())]) + "\n"
    response = client.post(
        reverse("inventory:machine-import"),
        {"file": SimpleUploadedFile("f.csv", content.encode())},
    )
    assert response.status_code == 302, response.content.decode()[:500]
    pages["inventory:machine-import-preview"] = [response["Location"]]


def _posted_pages(world: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Forms submitted empty or wrong: their validation errors must be translated too."""
    return [
        (
            reverse("inventory:machine-create"),
            {
                "hostname": "bad_host",
                "gpu_count": "0",
                "nics-TOTAL_FORMS": "0",
                "nics-INITIAL_FORMS": "0",
            },
        ),
        (reverse("inventory:gputype-create"), {}),
        (reverse("inventory:pool-create"), {}),
        (reverse("inventory:modelspec-import"), {"config_json": "{ not json"}),
        (reverse("decisions:create"), {}),
        (reverse("monitoring:target-create"), {"base_url": "ftp://x"}),
        (reverse("planner:wizard-step", args=["model"]), {"action": "next"}),
        (reverse("planner:wizard-step", args=["precision"]), {"action": "next"}),
        (reverse("planner:wizard-preview", args=["precision"]), {"weight_dtype": "int8"}),
    ]


def test_login_page_is_marked(client, pseudo_locale):
    from django.conf import settings

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = pseudo_locale
    response = client.get(reverse("login"))
    assert _findings(response.content.decode()) == []
    response = client.post(reverse("login"), {"username": "nobody", "password": "wrong"})
    assert _findings(response.content.decode()) == []


def test_the_detector_finds_unmarked_text():
    html = (
        "<p>⟦Machines⟧ 8 GiB</p><p>Unmarked words</p><code>raw code</code>"
        '<span translate="no">llm-platform owner</span><input type="submit" value="Save">'
        '<div title="⟦a ⟦nested⟧ tip⟧"></div>'
    )
    assert _findings(html) == [
        "p: 'Unmarked words' -> ['Unmarked', 'words']",
        "input[value]: 'Save' -> ['Save']",
    ]


def test_error_pages_are_marked(client, viewer, pseudo_locale):
    from django.conf import settings
    from django.template.loader import render_to_string

    client.force_login(viewer)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = pseudo_locale
    client.raise_request_exception = False

    not_found = client.get("/no-such-page/")
    forbidden = client.get(reverse("inventory:machine-create"))
    with translation.override(pseudo_locale):
        server_error = render_to_string("500.html")

    assert not_found.status_code == 404
    assert forbidden.status_code == 403
    for html in (not_found.content.decode(), forbidden.content.decode(), server_error):
        assert "⟦" in html
        assert _findings(html) == []
