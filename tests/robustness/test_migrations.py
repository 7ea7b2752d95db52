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


@pytest.mark.django_db
def test_sample_and_rollup_tables_have_no_index_on_the_target_alone():
    """Their keys start with the target; an index on it alone only misled the planner."""
    from django.db import connection

    for table in ("monitoring_sample", "monitoring_rollup"):
        with connection.cursor() as cursor:
            constraints = connection.introspection.get_constraints(cursor, table)
        alone = [n for n, c in constraints.items() if c["index"] and c["columns"] == ["target_id"]]
        assert not alone, (table, alone)
        keys = [c["columns"] for c in constraints.values() if c["unique"]]
        assert any(columns[0] == "target_id" for columns in keys), (table, keys)


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


# The scripts below start from an existing database at 0015 (before the partitions) with one
# target; `add_samples` writes its samples the given hours ago.
AT_0015 = """
from datetime import UTC, timedelta
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import override_settings
from django.utils import timezone

BEFORE = ("monitoring", "0015_spooled_writes")
call_command("migrate", "monitoring", BEFORE[1], interactive=False, verbosity=0)
old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
OldSample = old.get_model("monitoring", "Sample")
target = old.get_model("monitoring", "Target").objects.create(
    name="old", kind="vllm", base_url="http://127.0.0.1:9"
)
now = timezone.now()

def add_samples(*hours_ago):
    for hours in hours_ago:
        OldSample.objects.create(
            target_id=target.pk, series="vllm.requests_running", labels="",
            ts=now - timedelta(hours=hours), value=float(hours),
        )
"""


def _run_at_0015(database_url: str, tmp_path: Path, body: str) -> str:
    return _manage(database_url, tmp_path, "shell", "-c", AT_0015 + body)


# An existing database with samples (recent, and older than the raw retention) before the
# partitions, upgraded: the table stays where it is as the legacy partition (its rows and
# indexes are not copied or rebuilt: same files, and PostgreSQL reports the attach's range as
# implied, with nothing scanned or built), every row and id is kept, new polls write on on both
# sides of the cut-off, and retention deletes the legacy partition's expired rows in batches,
# then drops it once its cut-off is past the raw retention.
UPGRADE_WITH_SAMPLES = """
add_samples(1, 2, 49, 50, 100)  # the last three older than the 48 h raw retention
before = list(OldSample.objects.order_by("id").values_list("id", "ts", "value"))

def files(*names):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relfilenode FROM pg_class WHERE oid = ANY(%s::regclass[]) ORDER BY 1",
            [list(names)],
        )
        return [row[0] for row in cursor.fetchall()]

def foreign_keys(table):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT oid FROM pg_constraint WHERE contype = 'f' AND conrelid = %s::regclass",
            [table],
        )
        return [row[0] for row in cursor.fetchall()]

kept_files = files("monitoring_sample", "monitoring_sample_key", "monitoring_sample_ts")
kept_fks = foreign_keys("monitoring_sample")
notices = []
connection.ensure_connection()
connection.connection.add_notice_handler(lambda d: notices.append(d.message_primary))
with connection.cursor() as cursor:
    cursor.execute("SET client_min_messages = debug1")
call_command("migrate", interactive=False, verbosity=0)
with connection.cursor() as cursor:
    cursor.execute("RESET client_min_messages")

from monitoring import partitioning
from monitoring.models import RollupCursor, Sample
from monitoring.stores.embedded.retention import partitions_run, retention_run, sample_partitions

legacy = [p for p in map(partitioning.parse, sample_partitions()) if p and p.legacy]
assert len(legacy) == 1, sample_partitions()
legacy = legacy[0]
assert now + timedelta(hours=1) <= legacy.end <= now + timedelta(hours=2), (now, legacy)
legacy_files = files(legacy.name, "monitoring_sample_legacy_key", "monitoring_sample_legacy_ts")
with connection.cursor() as cursor:
    cursor.execute(f"SELECT COUNT(*) FROM {legacy.name}")
    assert cursor.fetchone()[0] == 5
assert legacy_files == kept_files, (kept_files, legacy_files)  # no row or index copied
assert foreign_keys(legacy.name) == kept_fks  # taken as it is, not added again and checked
mine = [n for n in notices if legacy.name in n or "84b99116" in n]
assert mine == [
    f'partition constraint for table "{legacy.name}" is implied by existing constraints'
], notices

after = list(Sample.objects.order_by("id").values_list("id", "ts", "value"))
assert after == before, (before, after)
last_id = before[-1][0]
for when in (now, legacy.end + timedelta(minutes=10)):  # either side of the cut-off
    made = Sample.objects.create(
        target_id=target.pk, series="vllm.requests_running", labels="", ts=when, value=9
    )
    assert made.pk > last_id, (made.pk, last_id)
    last_id = made.pk
assert Sample.objects.count() == 7
assert Sample.objects.filter(ts__gte=legacy.end).count() == 1
assert Sample.objects.filter(ts__lt=legacy.end).count() == 6
assert partitions_run(now=now) == []  # no hour below the cut-off: it is the legacy partition's

RollupCursor.objects.create(name="samples", rolled_up_to=legacy.end + timedelta(days=30))
with override_settings(
    MONITORING_RAW_RETENTION_H=48, MONITORING_RETENTION_BATCH_ROWS=1,
    MONITORING_RETENTION_MAX_BATCHES=3,  # one of them finds the default partition empty
):
    first = retention_run(now=now)
    assert (first.samples_deleted, first.done, first.partitions_dropped) == (2, False, 0), first
    second = retention_run(now=now)
    assert (second.samples_deleted, second.done) == (1, True), second
    assert legacy.name in sample_partitions()
    assert sorted(Sample.objects.values_list("value", flat=True)) == [1.0, 2.0, 9.0, 9.0]
    last = retention_run(now=legacy.end + timedelta(hours=48, minutes=1))
    assert last.partitions_dropped == 1, last
assert legacy.name not in sample_partitions()
assert list(Sample.objects.values_list("ts", flat=True)) == [legacy.end + timedelta(minutes=10)]
print("upgrade ok")
"""


@pytest.mark.integration
@pytest.mark.enable_socket
def test_an_existing_postgresql_database_with_samples_upgrades_to_partitions(
    tmp_path, fresh_postgresql
):
    assert "upgrade ok" in _run_at_0015(fresh_postgresql, tmp_path, UPGRADE_WITH_SAMPLES)


# Upgraded with samples, then back to 0015 (a plain table again, as it was, ids and sequence
# kept) and up again.
ROUND_TRIP = """
def schema():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relkind FROM pg_class WHERE oid = 'monitoring_sample'::regclass"
        )
        kind = cursor.fetchone()[0]
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = 'monitoring_sample'::regclass ORDER BY 1"
        )
        constraints = cursor.fetchall()
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'monitoring_sample' ORDER BY 1"
        )
        indexes = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT column_name, data_type, is_nullable, is_identity"
            " FROM information_schema.columns"
            " WHERE table_name = 'monitoring_sample' ORDER BY ordinal_position"
        )
        return kind, constraints, indexes, cursor.fetchall()

def rows(apps):
    Sample = apps.get_model("monitoring", "Sample")
    return list(Sample.objects.order_by("id").values_list("id", "target_id", "ts", "value"))

def apps_at(node):
    return MigrationExecutor(connection).loader.project_state(node).apps

plain = schema()
assert plain[0] == "r", plain
add_samples(1, 2, 100)
call_command("migrate", interactive=False, verbosity=0)
from monitoring.models import Sample
Sample.objects.create(target_id=target.pk, series="x", ts=now + timedelta(hours=3), value=9)
kept = rows(apps_at(("monitoring", "0016_sample_partitions")))
assert len(kept) == 4

call_command("migrate", "monitoring", BEFORE[1], interactive=False, verbosity=0)
assert schema() == plain, (plain, schema())
old = apps_at(BEFORE)
assert rows(old) == kept, (kept, rows(old))
made = old.get_model("monitoring", "Sample").objects.create(
    target_id=target.pk, series="s", labels="", ts=now, value=5
)
assert made.pk > kept[-1][0], (made.pk, kept)

call_command("migrate", interactive=False, verbosity=0)
assert schema()[0] == "p"
assert Sample.objects.count() == 5
print("round trip ok")
"""


@pytest.mark.integration
@pytest.mark.enable_socket
def test_the_partitions_migrate_back_to_a_plain_table_with_every_row_and_up_again(
    tmp_path, fresh_postgresql
):
    assert "round trip ok" in _run_at_0015(fresh_postgresql, tmp_path, ROUND_TRIP)


# An upgrade interrupted before its swap (here: an hour's partition name is taken) leaves the
# plain table as it was, without the cut-off's CHECK (it would refuse polls once past) or the
# half-built index, and runs again once the cause is gone.
INTERRUPTED = """
add_samples(0)
hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
taken = f"monitoring_sample_p{hour + timedelta(hours=2):%Y%m%d%H}"

def constraints():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relkind, array_agg(i.relname::text ORDER BY i.relname)"
            " FROM pg_class c JOIN pg_index x ON x.indrelid = c.oid"
            " JOIN pg_class i ON i.oid = x.indexrelid WHERE c.relname = 'monitoring_sample'"
            " GROUP BY c.relkind"
        )
        kind, indexes = cursor.fetchone()
        cursor.execute(
            "SELECT array_agg(conname::text ORDER BY conname) FROM pg_constraint"
            " WHERE conrelid = 'monitoring_sample'::regclass"
        )
        return kind, indexes, cursor.fetchone()[0]

with connection.cursor() as cursor:
    cursor.execute(f"CREATE TABLE {taken} (x int)")
try:
    call_command("migrate", "monitoring", "0016", interactive=False, verbosity=0)
except Exception as exc:
    assert taken in str(exc), exc
else:
    raise AssertionError("the upgrade ran over a taken name")
kind, indexes, names = constraints()
assert kind == "r", kind
assert not [n for n in indexes + names if "legacy" in n], (indexes, names)
with connection.cursor() as cursor:
    cursor.execute("SELECT to_regclass('monitoring_sample_partitioned')")
    assert cursor.fetchone()[0] is None
    cursor.execute(f"DROP TABLE {taken}")
call_command("migrate", interactive=False, verbosity=0)
from monitoring.models import Sample
assert constraints()[0] == "p"
assert Sample.objects.count() == 1
print("interrupted ok")
"""


@pytest.mark.integration
@pytest.mark.enable_socket
def test_an_interrupted_upgrade_leaves_the_plain_table_as_it_was_and_runs_again(
    tmp_path, fresh_postgresql
):
    assert "interrupted ok" in _run_at_0015(fresh_postgresql, tmp_path, INTERRUPTED)
