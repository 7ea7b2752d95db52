"""Migrations: every model change has one, and they apply from empty on SQLite and PostgreSQL.

The databases here are fresh ones of our own (a temporary SQLite file; a PostgreSQL database
created and dropped on DATABASE_URL's server), migrated by `manage.py` in a subprocess exactly as
an operator would, then unapplied to zero and applied again (every migration is reversible).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]
DATABASE_URL = os.environ.get("DATABASE_URL", "")
OUR_APPS = ("core", "inventory", "planner", "decisions", "monitoring")


@pytest.mark.django_db
def test_every_model_change_has_a_migration():
    try:
        call_command("makemigrations", "--check", "--dry-run", verbosity=1)
    except SystemExit as exc:
        pytest.fail(f"models changed without a migration (makemigrations --check exit {exc.code})")


def _manage(database_url: str, tmp_path: Path, *args: str) -> str:
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings.test",
        DATABASE_URL=database_url,
        SERVEPLAN_VAR_DIR=str(tmp_path / "var"),
    )
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stderr[-4000:]}"
    return done.stdout


# One process (Django starts once): apply all, unapply our apps newest dependants first, reapply.
UP_DOWN_UP = f"""
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

def pending():
    executor = MigrationExecutor(connection)
    return executor.migration_plan(executor.loader.graph.leaf_nodes())

call_command("migrate", interactive=False, verbosity=0)
assert not pending(), pending()
for app in {tuple(reversed(OUR_APPS))!r}:
    call_command("migrate", app, "zero", interactive=False, verbosity=0)
left = connection.introspection.table_names()
ours = [t for t in left if t.split("_")[0] in {OUR_APPS!r}]
assert not ours, ours
call_command("migrate", interactive=False, verbosity=0)
assert not pending(), pending()
call_command("makemigrations", "--check", "--dry-run", verbosity=0)
print("up-down-up ok")
"""


def _migrate_up_down_up(database_url: str, tmp_path: Path) -> None:
    assert "up-down-up ok" in _manage(database_url, tmp_path, "shell", "-c", UP_DOWN_UP)


def test_migrations_apply_from_empty_on_sqlite_and_reverse(tmp_path):
    _migrate_up_down_up(f"sqlite:///{tmp_path / 'fresh.sqlite3'}", tmp_path)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


@pytest.fixture
def fresh_postgresql():
    """The URL of a new, empty PostgreSQL database on DATABASE_URL's server (dropped after)."""
    if not DATABASE_URL.startswith(("postgres://", "postgresql://", "pgsql://")):
        pytest.fail("DATABASE_URL is not PostgreSQL: this test needs one (CI sets it).")
    import psycopg

    name = f"serveplan_migrations_{uuid.uuid4().hex[:8]}"
    admin_url = _with_database(DATABASE_URL, "postgres").replace("postgres://", "postgresql://", 1)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_database(DATABASE_URL, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.integration
@pytest.mark.enable_socket
def test_migrations_apply_from_empty_on_postgresql_and_reverse(tmp_path, fresh_postgresql):
    _migrate_up_down_up(fresh_postgresql, tmp_path)


# An existing database with samples (recent, and older than the raw retention) before the
# partitions, upgraded: every row is kept, ids too, and new polls write on.
UPGRADE_WITH_SAMPLES = """
from datetime import timedelta
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = ("monitoring", "0015_spooled_writes")
call_command("migrate", "monitoring", BEFORE[1], interactive=False, verbosity=0)
old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
target = old.get_model("monitoring", "Target").objects.create(
    name="old", kind="vllm", base_url="http://127.0.0.1:9"
)
now = timezone.now()
OldSample = old.get_model("monitoring", "Sample")
for hours in (1, 2, 100):  # the last one older than the 48 h raw retention
    OldSample.objects.create(
        target_id=target.pk, series="vllm.requests_running", labels="",
        ts=now - timedelta(hours=hours), value=float(hours),
    )
before = list(OldSample.objects.order_by("id").values_list("id", "ts", "value"))
call_command("migrate", interactive=False, verbosity=0)
from monitoring.models import Sample
after = list(Sample.objects.order_by("id").values_list("id", "ts", "value"))
assert after == before, (before, after)
Sample.objects.create(
    target_id=target.pk, series="vllm.requests_running", labels="", ts=now, value=9
)
assert Sample.objects.count() == 4
print("upgrade ok")
"""


@pytest.mark.integration
@pytest.mark.enable_socket
def test_an_existing_postgresql_database_with_samples_upgrades_to_partitions(
    tmp_path, fresh_postgresql
):
    assert "upgrade ok" in _manage(fresh_postgresql, tmp_path, "shell", "-c", UPGRADE_WITH_SAMPLES)
