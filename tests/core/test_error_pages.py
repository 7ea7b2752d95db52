"""`make run` shows the product's own error pages: DEBUG is off unless DEBUG=true."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

_PRINT_DEBUG = (
    "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings.local'; "
    "from django.conf import settings; print(settings.DEBUG)"
)


def _local_debug(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "DJANGO_SETTINGS_MODULE")}
    done = subprocess.run(
        [sys.executable, "-c", _PRINT_DEBUG],
        cwd=settings.BASE_DIR,
        env={**clean, "SERVEPLAN_VAR_DIR": str(settings.VAR_DIR), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_make_run_settings_have_debug_off_unless_asked():
    assert _local_debug() == "False"
    assert _local_debug(DEBUG="true") == "True"


@pytest.mark.django_db
def test_an_unknown_address_gets_the_friendly_404(viewer_client):
    response = viewer_client.get("/no-such-page/")

    assert response.status_code == 404
    body = response.content.decode()
    assert "Page not found" in body
    assert "URLconf" not in body  # Django's debug page lists every URL pattern


@pytest.mark.django_db
def test_a_crash_gets_the_friendly_500(viewer_client, monkeypatch):
    from planner.views import plans

    def boom(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(plans, "plan_get", boom)
    viewer_client.raise_request_exception = False

    response = viewer_client.get("/plans/00000000-0000-0000-0000-000000000000/")

    assert response.status_code == 500
    assert "Server error" in response.content.decode()
    assert "Traceback" not in response.content.decode()
    assert "boom" not in response.content.decode()
