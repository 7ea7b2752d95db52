"""Chart pages stay light: plotly.js with only the trace types we draw, deferred, compressed.

The bytes a browser transfers are what WhiteNoise serves: the Brotli copy collectstatic writes
beside every text file (CompressedManifestStaticFilesStorage). Here each file the page loads is
compressed the same way and summed with the gzipped HTML; nothing is timed.
"""

import gzip
import re
from pathlib import Path

import brotli
import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

from core.templatetags.plotly_i18n import PLOTLY_JS
from planner.selectors import plan_result
from planner.services import plan_create
from planner.services.charts import result_figures

pytestmark = pytest.mark.django_db

LIMIT_BYTES = 1_500_000
_SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)\ssrc=\"(?P<src>[^\"]+)\"")
_STYLESHEET = re.compile(r"<link[^>]*rel=\"stylesheet\"[^>]*href=\"(?P<href>[^\"]+)\"")


@pytest.fixture
def chart_page(demo_fleet, planner, planner_client, s2a_spec):
    plan = plan_create(spec=s2a_spec, actor=planner)
    response = planner_client.get(plan.get_absolute_url())
    assert response.status_code == 200
    return plan, response.content.decode()


def _static_path(url: str) -> Path:
    name = url.removeprefix("/" + settings.STATIC_URL.strip("/") + "/")
    found = finders.find(name)
    assert found, f"{url} is not a static file"
    return Path(found)


def test_chart_pages_load_the_cartesian_bundle_deferred(chart_page):
    _plan, html = chart_page
    scripts = {m["src"]: m["attrs"] for m in _SCRIPT.finditer(html)}

    plotly = [src for src in scripts if "plotly" in src and "locale" not in src]
    assert plotly == [f"/{settings.STATIC_URL.strip('/')}/{PLOTLY_JS}"]
    # Charts never hold up the first paint: every script that draws them is deferred.
    for src, attrs in scripts.items():
        if "plotly" in src or "charts" in src:
            assert "defer" in attrs, src


def test_every_trace_type_we_draw_is_in_the_bundle(chart_page):
    plan, _html = chart_page
    bundle = _static_path(f"/static/{PLOTLY_JS}").read_text(encoding="utf-8")
    shipped = set(re.findall(r'moduleType:"trace",name:"(\w+)"', bundle))
    drawn = {
        trace["type"]
        for figure in result_figures(plan_result(plan)).values()
        for trace in figure["data"]
    }
    static_root = Path(settings.BASE_DIR) / "static"
    for script in static_root.rglob("*.js"):
        if "vendor" not in script.parts:
            drawn |= set(re.findall(r"type:\s*\"(scatter\w*|bar|heatmap\w*|pie|box|histogram\w*)\"",
                                    script.read_text(encoding="utf-8")))  # fmt: skip

    assert drawn
    assert drawn <= shipped, f"plotly.js distribution lacks {drawn - shipped}"


def test_a_chart_page_transfers_at_most_1_5_mb(chart_page):
    _plan, html = chart_page
    assets = [m["src"] for m in _SCRIPT.finditer(html)]
    assets += [m["href"] for m in _STYLESHEET.finditer(html)]

    sizes = {"page": len(gzip.compress(html.encode()))}
    for url in assets:
        if url.startswith("/static/"):
            sizes[url] = len(brotli.compress(_static_path(url).read_bytes()))
    total = sum(sizes.values())

    assert total <= LIMIT_BYTES, sizes
    assert sum(v for k, v in sizes.items() if "plotly" in k) < 500_000


def test_static_files_are_served_hashed_and_compressed():
    from config.settings import base

    backend = "whitenoise.storage.CompressedManifestStaticFilesStorage"
    assert base.STORAGES["staticfiles"]["BACKEND"] == backend  # production and make run
