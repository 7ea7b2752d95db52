"""Shared set-up of the planner benchmarks: a throw-away database holding the demo fleet."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup_demo_database(label: str) -> None:
    """Configure Django on a throw-away database, migrate it and load the demo fleet."""
    tmp = tempfile.mkdtemp(prefix=f"serveplan-bench-{label}-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ["SERVEPLAN_VAR_DIR"] = tmp
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "sqlite":
        # Never touch a real database's data: run on a throw-away database of our own.
        connection.settings_dict.setdefault("TEST", {})["NAME"] = f"serveplan_bench_{label}"
        connection.creation.create_test_db(verbosity=0, autoclobber=True)
    else:
        call_command("migrate", verbosity=0)
    from django.conf import settings

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]  # Django's test client
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()


def planner_user():
    """Return a user in the planner group."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(username="bench-planner", password="x-bench-1")
    user.groups.add(Group.objects.get_or_create(name="planner")[0])
    return user


def teardown_database() -> None:
    """Drop the throw-away database, closing what a bench's own web server threads left open
    (each request thread keeps its connection; PostgreSQL refuses to drop a database in use)."""
    from django.db import connection

    if connection.vendor == "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]
