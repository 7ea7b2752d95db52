"""First paint and transferred bytes of a plan's result page in headless Chromium (issue 18).

Targets: first contentful paint <= 1 s on this machine when idle; a chart page transfers
<= 1.5 MB. The page is served as in production: the WSGI application with WhiteNoise serving
the collected, hashed and Brotli/gzip-compressed static files (CompressedManifestStaticFilesStorage)
on a loopback port, DEBUG off. Each load runs in a fresh browser context (an empty cache: what a
first visit costs); the same is measured for the sign-in page, a page without charts, so that a
busy machine shows as a ratio rather than a miss. Chromium's own performance entries give the
figures: `first-contentful-paint`, the navigation's server time (request to first byte) and the
`transferSize` of the document and of every resource.

Run: .venv/bin/python bench/bench_first_paint.py [--loads 7]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from _planner_setup import percentile, planner_user, setup_demo_database, teardown_database

CHROMIUM = "/usr/bin/chromium"
FCP_TARGET_MS = 1000.0
BYTES_TARGET = 1_500_000

MEASURE = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  const resources = performance.getEntriesByType('resource');
  return {
    fcp: paint ? paint.startTime : null,
    ttfb: nav.responseStart - nav.requestStart,
    bytes: nav.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0),
    resources: resources.length,
  };
}"""


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
        pass


def _production_static() -> None:
    """Collect the static files hashed and compressed as `make run` and production serve them."""
    from django.conf import settings
    from django.core.management import call_command

    settings.STATIC_ROOT = Path(tempfile.mkdtemp(prefix="serveplan-bench-static-"))
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    settings.DEBUG = False
    call_command("collectstatic", interactive=False, verbosity=0)


def _serve() -> tuple[_Server, str]:
    from django.core.wsgi import get_wsgi_application

    server = make_server("127.0.0.1", 0, get_wsgi_application(), _Server, _QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def _load(browser, url: str, session: str | None) -> dict:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    if session:
        context.add_cookies([{"name": "sessionid", "value": session, "url": url}])
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")  # deferred charts and their bundle included
    figures = page.evaluate(MEASURE)
    context.close()
    return figures


def _report(name: str, loads: list[dict]) -> float:
    fcp = [x["fcp"] for x in loads if x["fcp"] is not None]
    ttfb = [x["ttfb"] for x in loads]
    kib = max(x["bytes"] for x in loads) / 1024
    print(
        f"{name}: fcp_p50_ms={statistics.median(fcp):.0f} fcp_p95_ms={percentile(fcp, 0.95):.0f} "
        f"server_ttfb_p50_ms={statistics.median(ttfb):.0f} transferred_kib={kib:.0f} "
        f"resources={loads[-1]['resources']}"
    )
    return statistics.median(fcp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loads", type=int, default=7)
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"skipped: Chromium is not installed at {CHROMIUM}")
        return
    setup_demo_database("first_paint")
    _production_static()
    from bench_plan_api import SPECS
    from django.test import Client
    from playwright.sync_api import sync_playwright

    from planner.services import plan_create

    user = planner_user()
    plan = plan_create(spec=SPECS["S2a (pool)"], actor=user)
    client = Client()
    client.force_login(user)
    session = client.cookies["sessionid"].value
    server, base = _serve()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                headless=True,
            )
            result_url = base + plan.get_absolute_url()
            _load(browser, result_url, session)  # warm the server (templates, catalog)
            baseline = [_load(browser, base + "/accounts/login/", None) for _ in range(args.loads)]
            result = [_load(browser, result_url, session) for _ in range(args.loads)]
            browser.close()
    finally:
        server.shutdown()
        teardown_database()
    print(f"loads per page: {args.loads} (fresh browser context each: empty cache)")
    base_fcp = _report("sign-in page (no charts)", baseline)
    fcp = _report("result page S2a (4 charts)", result)
    worst = max(x["bytes"] for x in result)
    print(
        f"result page: first paint {fcp:.0f} ms vs target {FCP_TARGET_MS:.0f} ms "
        f"({'within' if fcp <= FCP_TARGET_MS else 'over'}); {fcp / base_fcp:.1f}x the sign-in "
        f"page's; transferred {worst / 1e6:.2f} MB vs {BYTES_TARGET / 1e6:.1f} MB "
        f"({'within' if worst <= BYTES_TARGET else 'over'})"
    )


if __name__ == "__main__":
    main()
