"""Locust users of the load benchmark (run by bench/bench_load.py; not a benchmark by itself).

Each user is a signed-in browser tab. It opens a dashboard (the fleet overview, a vLLM server or
the Ray cluster) and, like static/monitoring/dashboard.js, refreshes it every 5 s: the panel HTML
(`data-refresh-url`) and the chart JSON (`data-series-url` with the charts' `data-series`,
`data-state-url`). Every 4 to 12 refreshes it moves on: mostly to another dashboard, sometimes
to a saved plan's result page, sometimes through the five wizard steps with their default
answers (then to the new plan's result page).

Configuration comes from the environment (bench_load.py writes it): LOAD_SESSIONS_FILE (JSON:
sessions, target ids, plan URLs), LOAD_SAMPLES_FILE (where every request's time is written as
JSON lines when locust quits), LOAD_REFRESH_S.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import threading
from html.parser import HTMLParser
from urllib.parse import urlsplit

from dashboard_urls import dashboard_calls
from locust import HttpUser, constant_pacing, events, task

REFRESH_S = float(os.environ.get("LOAD_REFRESH_S", "5"))
CONFIG = json.loads(open(os.environ["LOAD_SESSIONS_FILE"]).read())  # noqa: SIM115
_sessions = itertools.cycle(CONFIG["sessions"])
_lock = threading.Lock()
_records: list[tuple[str, str, float, bool]] = []

WIZARD_SHARE = 0.15
PLAN_PAGE_SHARE = 0.25
# Share of dashboard opens that go to the fleet overview (the rest: 6 vLLM pages to 1 Ray page).
OVERVIEW_SHARE = float(os.environ.get("LOAD_OVERVIEW_SHARE", "0.3"))


@events.request.add_listener
def _record(request_type, name, response_time, response_length, exception, **kwargs):
    group = name.split(":", 1)[0]
    with _lock:
        _records.append((group, name, float(response_time), exception is None))


@events.quitting.add_listener
def _dump(environment, **kwargs):
    with open(os.environ["LOAD_SAMPLES_FILE"], "w") as out:
        for group, name, ms, ok in _records:
            out.write(json.dumps({"group": group, "name": name, "ms": ms, "ok": ok}) + "\n")


class _FormParser(HTMLParser):
    """Collect what a browser would submit from the form with id `form_id` (no JS)."""

    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.fields: list[tuple[str, str]] = []
        self._select: str | None = None
        self._select_first: str | None = None
        self._select_chosen = False
        self._textarea: str | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        if tag == "form" and a.get("id") == self.form_id:
            self.inside = True
        if not self.inside:
            return
        name = a.get("name")
        if tag == "input" and name and "disabled" not in a:
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.fields.append((name, a.get("value", "on")))
            elif kind not in ("submit", "button", "image", "file", "reset"):
                self.fields.append((name, a.get("value", "")))
        elif tag == "select" and name:
            self._select, self._select_first, self._select_chosen = name, None, False
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            if self._select_first is None:
                self._select_first = value
            if "selected" in a and not self._select_chosen:
                self.fields.append((self._select, value))
                self._select_chosen = True
        elif tag == "textarea" and name:
            self._textarea, self._text = name, ""

    def handle_data(self, data):
        if self._textarea is not None:
            self._text += data

    def handle_endtag(self, tag):
        if not self.inside:
            return
        if tag == "select" and self._select is not None:
            if not self._select_chosen and self._select_first is not None:
                self.fields.append((self._select, self._select_first))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self.fields.append((self._textarea, self._text.lstrip("\n")))
            self._textarea = None
        elif tag == "form":
            self.inside = False


def form_fields(html: str, form_id: str) -> list[tuple[str, str]]:
    parser = _FormParser(form_id)
    parser.feed(html)
    return parser.fields


class DashboardUser(HttpUser):
    wait_time = constant_pacing(REFRESH_S)

    def on_start(self) -> None:
        session = next(_sessions)
        host = urlsplit(self.host).netloc
        # Production settings behind a TLS proxy: the proxy's header makes Django see HTTPS; the
        # session and CSRF cookies are Secure, so they are sent by hand over loopback HTTP.
        self.client.headers.update(
            {
                "Cookie": f"sessionid={session['sessionid']}; csrftoken={session['csrftoken']}",
                "X-Forwarded-Proto": "https",
                "Origin": f"https://{host}",
                "Referer": f"https://{host}/",
            }
        )
        self.csrftoken = session["csrftoken"]
        self.refreshes_left = 0
        self.json_urls: list[str] = []
        self.panel_urls: list[str] = []

    # --- helpers ---
    def _get(self, url: str, name: str, *, json_body: bool = False) -> str | None:
        with self.client.get(url, name=name, catch_response=True, allow_redirects=False) as r:
            if r.status_code != 200:
                r.failure(f"{r.status_code} {r.headers.get('Location', '')}")
                return None
            if json_body:
                try:
                    r.json()
                except ValueError:
                    r.failure("not JSON")
                    return None
            return r.text

    def _post(self, url: str, fields: list[tuple[str, str]], name: str) -> str | None:
        data = [(k, v) for k, v in fields if k != "csrfmiddlewaretoken"]
        data.append(("csrfmiddlewaretoken", self.csrftoken))
        with self.client.post(
            url, data=data, name=name, catch_response=True, allow_redirects=False
        ) as r:
            if r.status_code != 302:
                r.failure(f"{r.status_code}: the form was not accepted")
                return None
            return urlsplit(r.headers["Location"]).path

    # --- what a tab does ---
    def open_dashboard(self) -> None:
        kind = random.random()
        if kind < OVERVIEW_SHARE:
            url, name = "/monitoring/", "page:overview"
        elif kind < OVERVIEW_SHARE + (1 - OVERVIEW_SHARE) * 6 / 7:
            url, name = f"/monitoring/targets/{random.choice(CONFIG['vllm_ids'])}/", "page:vllm"
        else:
            url, name = f"/monitoring/targets/{random.choice(CONFIG['ray_ids'])}/", "page:ray"
        html = self._get(url, name)
        self.json_urls, self.panel_urls = dashboard_calls(html or "")
        if url == "/monitoring/":
            self.json_urls.append("/api/v1/monitoring/overview/")
        self.refreshes_left = random.randint(4, 12)

    def refresh(self) -> None:
        for url in self.panel_urls:
            self._get(url, "panel:" + _route(url))
        for url in self.json_urls:
            self._get(url, "json:" + _route(url), json_body=True)

    def run_wizard(self) -> None:
        path = "/plans/new/model/"
        self.client.get("/plans/new/?reset=1", name="wizard:start", allow_redirects=False)
        for _ in range(6):
            html = self._get(path, "wizard:step GET")
            if html is None:
                return
            fields = [(k, v) for k, v in form_fields(html, "wizard-form") if k != "action"]
            last = 'value="finish" class="primary"' in html
            fields.append(("action", "finish" if last else "next"))
            location = self._post(path, fields, "wizard:step POST")
            if location is None:
                return
            if not location.startswith("/plans/new/"):
                self._get(location, "plan:result page (new)")
                return
            path = location

    @task
    def tick(self) -> None:
        if self.refreshes_left <= 0:
            roll = random.random()
            if roll < WIZARD_SHARE:
                self.run_wizard()
            elif roll < WIZARD_SHARE + PLAN_PAGE_SHARE:
                self._get(random.choice(CONFIG["plan_urls"]), "plan:result page")
            self.open_dashboard()
            return
        self.refreshes_left -= 1
        self.refresh()


def _route(url: str) -> str:
    """Return a stats name for `url` with its ids and query left out."""
    path = urlsplit(url).path
    return re.sub(r"/\d+/", "/<id>/", path)
