"""Fixtures shared by the whole suite: users in each role and clients signed in as them."""

import os

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.test import APIClient

from core.models import ApiToken


def _user_in(role: str | None, username: str):
    user = get_user_model().objects.create_user(username=username, password="pw-for-tests-1")
    if role:
        # get_or_create: a transactional test that flushed the database also removed the groups.
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


@pytest.fixture
def viewer(db):
    return _user_in("viewer", "vera-viewer")


@pytest.fixture
def planner(db):
    return _user_in("planner", "pat-planner")


@pytest.fixture
def admin_user(db):
    user = _user_in("admin", "ada-admin")
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


@pytest.fixture
def viewer_client(viewer) -> Client:
    client = Client()
    client.force_login(viewer)
    return client


@pytest.fixture
def planner_client(planner) -> Client:
    client = Client()
    client.force_login(planner)
    return client


@pytest.fixture
def admin_client_(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


@pytest.fixture
def viewer_api(viewer) -> APIClient:
    client = APIClient()
    client.force_authenticate(viewer)
    return client


@pytest.fixture
def planner_api(planner) -> APIClient:
    client = APIClient()
    client.force_authenticate(planner)
    return client


@pytest.fixture
def planner_token_api(planner) -> APIClient:
    """An API client that authenticates with a real DRF token, as scripts do."""
    client = APIClient()
    _, key = ApiToken.issue(user=planner, name="ci script")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


REAL_SERVICE_MARKERS = ("integration", "ray", "vllm", "browser", "tsdb")
# Tests that start real servers or processes run one after another on one xdist worker: two at a
# time would fight over the machine's two cores and time out; the rest is spread over workers.
SERIAL_MARKERS = ("integration", "ray", "vllm", "tsdb")


def pytest_collection_modifyitems(config, items):
    """Put every real-server test in one xdist group (run with `--dist loadgroup`)."""
    for item in items:
        if any(item.get_closest_marker(m) for m in SERIAL_MARKERS):
            item.add_marker(pytest.mark.xdist_group("real-servers"))
        elif item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under `make test` (scripts/test-env) and in CI, a skipped test that needs a real service is a
    failure: every service was provided, so a skip would hide a gap."""
    outcome = yield
    report = outcome.get_result()
    opted_out = item.get_closest_marker("destructive") and (
        os.environ.get("SERVEPLAN_ALLOW_SERVICE_RESTARTS") != "1"
    )
    if (
        (os.environ.get("CI") or os.environ.get("SERVEPLAN_REQUIRE_SERVICES"))
        and report.skipped
        and not opted_out
        and any(item.get_closest_marker(m) for m in REAL_SERVICE_MARKERS)
    ):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI although it needs a real service: {report.longrepr}"


@pytest.fixture(autouse=True)
def _empty_cache():
    """Start every test with an empty cache (Django's, and what a GPU poll keeps per process)."""
    from django.core.cache import cache

    from monitoring.machines import overview

    cache.clear()
    overview.forget_cached()


@pytest.fixture(autouse=True)
def _default_language():
    """Every test starts and ends in the site's default language.

    A test-client request in another language leaves that language active in the thread (the
    locale middleware does not undo it), so without this a later test's English strings depend on
    which test ran before it on the same xdist worker.
    """
    from django.conf import settings
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for one test module (module scope: Playwright's sync API runs an event
    loop in this thread, which must not outlive the module's browser tests)."""
    from pathlib import Path

    from tests.browser import CHROMIUM, CHROMIUM_ARGS

    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM}")
    # While Playwright's loop runs in this thread, Django sees an async context: let the tests'
    # synchronous setup use the ORM for exactly that long.
    with (
        pytest.MonkeyPatch.context() as patch,
        sync_api.sync_playwright() as pw,
    ):
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()
