"""Raw samples: no index on the target alone, and hourly partitions on PostgreSQL.

The target's own index repeated the first column of the sample key, which serves every read by
target (EXPLAIN ANALYZE on a filled table: no plan used it). On PostgreSQL the table becomes
range-partitioned on `ts` by the hour, with a default partition, so that retention drops whole
hours instead of deleting rows (monitoring/partitioning.py). SQLite keeps the plain table.

The rows present are not copied: the table itself becomes one partition,
`monitoring_sample_legacy_beforeYYYYMMDDHH`, holding every row before that cut-off hour (one
to two hours after the newest row or the upgrade). What costs time in proportion to the rows is
done first, while polls write on: a CHECK constraint on the cut-off, added NOT VALID then
validated (so the attach need not scan the table), and the unique (id, ts) index of the new
primary key, built CONCURRENTLY (so the migration is not atomic). Then one short transaction
under lock renames, swaps the keys and attaches: measured on PostgreSQL 15, ATTACH PARTITION
reuses an index only behind a constraint (the (id, ts) index becomes the old table's primary
key), reuses the foreign key as it is DEFERRABLE INITIALLY DEFERRED like the new table's
(otherwise it validates it), and scans unless a constraint implies the range. An empty table is
simply replaced. An interrupted upgrade leaves the table as it was and may be run again.

Reversed, the rows are copied back into a plain table in one transaction (the table is locked
for that long; a downgrade is rare).

Self-contained: its names and SQL are its own, not the live modules' (which may change).
"""

import logging
import time
from datetime import UTC, datetime, timedelta

import django.db.models.deletion
from django.conf import settings
from django.db import OperationalError, migrations, models, transaction
from django.utils import timezone

logger = logging.getLogger(__name__)

TABLE = "monitoring_sample"
NEW = f"{TABLE}_partitioned"
PLAIN = f"{TABLE}_plain"
DEFAULT = f"{TABLE}_default"
SEQUENCE = f"{TABLE}_id_seq"
FK = f"{TABLE}_target_id_fk_monitoring_target_id"
# The plain table's foreign key and target index as Django named them (0001), for the reverse.
PLAIN_FK = f"{TABLE}_target_id_84b99116_fk_monitoring_target_id"
TARGET_INDEX = f"{TABLE}_target_id_84b99116"
# The legacy partition: this prefix and its cut-off hour (monitoring.partitioning parses it).
LEGACY_PREFIX = f"{TABLE}_legacy_before"
LEGACY_CHECK = f"{TABLE}_legacy_check"
LEGACY_PKEY = f"{TABLE}_legacy_pkey"
LEGACY_KEY = f"{TABLE}_legacy_key"
LEGACY_TS = f"{TABLE}_legacy_ts"
COLUMNS = "id, target_id, series, labels, ts, value"
HOUR = timedelta(hours=1)
# Rows are written into the old table until the attach: the cut-off leaves them that long.
CUTOFF_AHEAD = 2 * HOUR
# The short locked steps give up after this wait for the table (a poll or a long read holds it)
# and try again, rather than queue every poll behind them.
LOCK_TIMEOUT_MS = 2000
LOCK_ATTEMPTS = 30
LOCK_CONFLICTS = {"55P03", "40P01"}  # lock_not_available, deadlock_detected


def _floor_hour(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def _literal(when: datetime) -> str:
    return f"'{when.astimezone(UTC):%Y-%m-%d %H:%M:%S}+00'"


def _partitioned(cursor) -> bool:
    cursor.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [TABLE])
    row = cursor.fetchone()
    return row is not None and row[0] == "p"


def _locked(conn, step):
    """Run `step(cursor)` in a transaction whose lock waits are bounded, again on a conflict."""
    for attempt in range(1, LOCK_ATTEMPTS + 1):
        try:
            with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
                cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT_MS}ms'")
                return step(cursor)
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) not in LOCK_CONFLICTS:
                raise
            if attempt == LOCK_ATTEMPTS:
                raise
            logger.warning("%s busy (%s): trying again", TABLE, exc)
            time.sleep(1)
    return None


def _last_id(cursor, table: str) -> int:
    """The last id given out: the table's sequence may be ahead of its rows."""
    cursor.execute(
        f"SELECT GREATEST(COALESCE(MAX(id), 0), COALESCE(pg_sequence_last_value("
        f"pg_get_serial_sequence(%s, 'id')::regclass), 0)) FROM {table}",
        [table],
    )
    return int(cursor.fetchone()[0])


def _own_sequence(cursor, last_id: int, *tables: str) -> None:
    cursor.execute(f"CREATE SEQUENCE {SEQUENCE} OWNED BY {TABLE}.id")
    cursor.execute("SELECT setval(%s, %s, %s)", [SEQUENCE, max(last_id, 1), last_id > 0])
    for table in tables:
        cursor.execute(f"ALTER TABLE {table} ALTER COLUMN id SET DEFAULT nextval('{SEQUENCE}')")


def _create_partitioned(cursor, first_hour: datetime, end: datetime) -> None:
    """The new (empty) partitioned table as NEW: its default partition, hourly partitions for
    [first_hour, end), keys under names of its own until the swap, the final foreign key."""
    cursor.execute(
        f"CREATE TABLE {NEW} (id bigint NOT NULL, target_id bigint NOT NULL,"
        " series varchar(100) NOT NULL, labels varchar(400) NOT NULL,"
        " ts timestamp with time zone NOT NULL, value double precision NOT NULL)"
        " PARTITION BY RANGE (ts)"
    )
    cursor.execute(f"CREATE TABLE {DEFAULT} PARTITION OF {NEW} DEFAULT")
    hour = first_hour
    while hour < end:
        cursor.execute(
            f"CREATE TABLE {TABLE}_p{hour:%Y%m%d%H} PARTITION OF {NEW}"
            f" FOR VALUES FROM ({_literal(hour)}) TO ({_literal(hour + HOUR)})"
        )
        hour += HOUR
    # A partitioned table's unique keys must hold the partition column.
    cursor.execute(f"ALTER TABLE {NEW} ADD CONSTRAINT {NEW}_pkey PRIMARY KEY (id, ts)")
    cursor.execute(
        f"ALTER TABLE {NEW} ADD CONSTRAINT {NEW}_key UNIQUE (target_id, series, ts, labels)"
    )
    cursor.execute(f"CREATE INDEX {NEW}_ts ON {NEW} (ts)")
    # As Django makes it: a foreign key of the same kind on the old table is reused by the attach.
    cursor.execute(
        f"ALTER TABLE {NEW} ADD CONSTRAINT {FK} FOREIGN KEY (target_id)"
        " REFERENCES monitoring_target (id) DEFERRABLE INITIALLY DEFERRED"
    )


def _take_the_name(cursor) -> None:
    """NEW becomes TABLE, its keys the model's names (the old table gave them up)."""
    cursor.execute(f"ALTER TABLE {NEW} RENAME TO {TABLE}")
    cursor.execute(f"ALTER TABLE {TABLE} RENAME CONSTRAINT {NEW}_pkey TO {TABLE}_pkey")
    cursor.execute(f"ALTER TABLE {TABLE} RENAME CONSTRAINT {NEW}_key TO {TABLE}_key")
    cursor.execute(f"ALTER INDEX {NEW}_ts RENAME TO {TABLE}_ts")


def _lock_tables(cursor) -> None:
    # The target table first, as a poll takes them (it updates its target, then adds samples);
    # the attach takes it too (the old foreign key's triggers there give way to the new one's).
    cursor.execute(f"LOCK TABLE monitoring_target, {TABLE} IN ACCESS EXCLUSIVE MODE")


def _clean_up(conn) -> None:
    """Undo what an interrupted upgrade left on the plain table (nothing once partitioned)."""
    with conn.cursor() as cursor:
        if _partitioned(cursor):
            return
        cursor.execute(
            "SELECT to_regclass(%s) IS NOT NULL, to_regclass(%s) IS NOT NULL,"
            " EXISTS (SELECT 1 FROM pg_constraint WHERE conname = %s"
            " AND conrelid = to_regclass(%s))",
            [NEW, LEGACY_PKEY, LEGACY_CHECK, TABLE],
        )
        new, index, check = cursor.fetchone()
    if new or check:

        def drop(cursor):
            cursor.execute(f"DROP TABLE IF EXISTS {NEW} CASCADE")
            cursor.execute(f"ALTER TABLE {TABLE} DROP CONSTRAINT IF EXISTS {LEGACY_CHECK}")

        _locked(conn, drop)
    if index:  # perhaps invalid (a build that was interrupted)
        with conn.cursor() as cursor:
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {LEGACY_PKEY}")


def _replace_empty(conn, now: datetime, ahead: datetime) -> None:
    def swap(cursor):
        _create_partitioned(cursor, _floor_hour(now), ahead)
        _lock_tables(cursor)
        last_id = _last_id(cursor, TABLE)
        # Rows a poll wrote since the table was found empty (a few at most).
        cursor.execute(f"INSERT INTO {NEW} ({COLUMNS}) SELECT {COLUMNS} FROM {TABLE}")
        cursor.execute(f"DROP TABLE {TABLE}")
        _take_the_name(cursor)
        _own_sequence(cursor, last_id, TABLE)

    _locked(conn, swap)


def _attach_in_place(conn, now: datetime, ahead: datetime) -> None:
    with conn.cursor() as cursor:
        cursor.execute(f"SELECT MAX(ts) FROM {TABLE}")
        newest = cursor.fetchone()[0] or now
    cutoff = _floor_hour(max(now, newest)) + CUTOFF_AHEAD
    legacy = f"{LEGACY_PREFIX}{cutoff:%Y%m%d%H}"

    # While polls write on: every row, present or written until the attach, is before the
    # cut-off (ADD ... NOT VALID holds the lock a moment; VALIDATE scans without blocking
    # writes), and the (id, ts) index of the new primary key is built beside them.
    _locked(
        conn,
        lambda cursor: cursor.execute(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT {LEGACY_CHECK}"
            f" CHECK (ts < {_literal(cutoff)}) NOT VALID"
        ),
    )
    with conn.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {TABLE} VALIDATE CONSTRAINT {LEGACY_CHECK}")
        cursor.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {LEGACY_PKEY} ON {TABLE} (id, ts)")
    _locked(conn, lambda cursor: _create_partitioned(cursor, cutoff, max(ahead, cutoff + HOUR)))

    def swap(cursor):
        # Catalog changes only: no statement here reads the rows (but MAX(id), on its index).
        _lock_tables(cursor)
        last_id = _last_id(cursor, TABLE)
        cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id DROP IDENTITY IF EXISTS")
        cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id DROP DEFAULT")
        cursor.execute(f"DROP SEQUENCE IF EXISTS {SEQUENCE}")  # a serial's, not an identity's
        cursor.execute(f"ALTER TABLE {TABLE} DROP CONSTRAINT {TABLE}_pkey")
        cursor.execute(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT {LEGACY_PKEY} PRIMARY KEY USING INDEX {LEGACY_PKEY}"
        )
        cursor.execute(f"ALTER TABLE {TABLE} RENAME CONSTRAINT {TABLE}_key TO {LEGACY_KEY}")
        cursor.execute(f"ALTER INDEX {TABLE}_ts RENAME TO {LEGACY_TS}")
        cursor.execute(f"ALTER TABLE {TABLE} RENAME TO {legacy}")
        _take_the_name(cursor)
        _own_sequence(cursor, last_id, TABLE, legacy)
        # The CHECK implies the range: no scan. The keys and the ts index are taken as they are.
        cursor.execute(
            f"ALTER TABLE {TABLE} ATTACH PARTITION {legacy}"
            f" FOR VALUES FROM (MINVALUE) TO ({_literal(cutoff)})"
        )
        cursor.execute(f"ALTER TABLE {legacy} DROP CONSTRAINT {LEGACY_CHECK}")

    _locked(conn, swap)


def drop_target_index(apps, schema_editor):
    """Drop the target's own index (CONCURRENTLY on PostgreSQL).

    Not AlterField's way: for a foreign key it drops and adds the constraint again, and adding it
    checks every row with the table locked against writes."""
    conn = schema_editor.connection
    with conn.cursor() as cursor:
        if conn.vendor == "postgresql" and _partitioned(cursor):
            return
        constraints = conn.introspection.get_constraints(cursor, TABLE)
        for name, about in constraints.items():
            if about["index"] and about["columns"] == ["target_id"] and not about["unique"]:
                how = "CONCURRENTLY " if conn.vendor == "postgresql" else ""
                cursor.execute(f"DROP INDEX {how}{conn.ops.quote_name(name)}")


def add_target_index(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"CREATE INDEX {TARGET_INDEX} ON {TABLE} (target_id)")


def partition_samples(apps, schema_editor):
    conn = schema_editor.connection
    if conn.vendor != "postgresql":
        return
    with conn.cursor() as cursor:
        if _partitioned(cursor):
            return  # an earlier run got as far as the swap
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {TABLE})")
        empty = not cursor.fetchone()[0]
    _clean_up(conn)
    now = timezone.now()
    ahead = now + timedelta(hours=max(getattr(settings, "MONITORING_SAMPLE_PARTITIONS_AHEAD_H", 6), 0))
    try:
        if empty:
            _replace_empty(conn, now, ahead)
        else:
            _attach_in_place(conn, now, ahead)
    except BaseException:
        # The CHECK would refuse polls once its cut-off is past: leave the table as it was.
        try:
            _clean_up(conn)
        except Exception:
            logger.exception("%s: could not undo the interrupted upgrade", TABLE)
        raise


def unpartition_samples(apps, schema_editor):
    """Copy the rows back into a plain table, as it was before 0016 (ids and sequence kept)."""
    conn = schema_editor.connection
    if conn.vendor != "postgresql":
        return

    def copy_back(cursor):
        if not _partitioned(cursor):
            return
        _lock_tables(cursor)
        cursor.execute(f"SELECT last_value, is_called FROM {SEQUENCE}")
        last_value, called = cursor.fetchone()
        cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {TABLE}")
        last_id = max(int(cursor.fetchone()[0]), int(last_value) if called else 0)
        cursor.execute(
            f"CREATE TABLE {PLAIN} (id bigint NOT NULL, series varchar(100) NOT NULL,"
            " labels varchar(400) NOT NULL, ts timestamp with time zone NOT NULL,"
            " value double precision NOT NULL, target_id bigint NOT NULL)"
        )
        cursor.execute(f"INSERT INTO {PLAIN} ({COLUMNS}) SELECT {COLUMNS} FROM {TABLE}")
        cursor.execute(f"DROP TABLE {TABLE}")  # its partitions and its sequence with it
        cursor.execute(f"ALTER TABLE {PLAIN} RENAME TO {TABLE}")
        cursor.execute(
            f"ALTER TABLE {TABLE} ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY"
            f" (SEQUENCE NAME {SEQUENCE})"
        )
        cursor.execute("SELECT setval(%s, %s, %s)", [SEQUENCE, max(last_id, 1), last_id > 0])
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id)")
        cursor.execute(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_key UNIQUE (target_id, series, ts, labels)"
        )
        cursor.execute(f"CREATE INDEX {TABLE}_ts ON {TABLE} (ts)")
        cursor.execute(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT {PLAIN_FK} FOREIGN KEY (target_id)"
            " REFERENCES monitoring_target (id) DEFERRABLE INITIALLY DEFERRED"
        )

    _locked(conn, copy_back)


class Migration(migrations.Migration):
    # Not atomic: the CHECK's validation and the index build run beside the polls' writes, and
    # CREATE INDEX CONCURRENTLY cannot run in a transaction. The steps that change the table's
    # shape are each one transaction.
    atomic = False

    dependencies = [
        ("monitoring", "0015_spooled_writes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="sample",
                    name="target",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="samples",
                        to="monitoring.target",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunPython(drop_target_index, add_target_index, elidable=False),
            ],
        ),
        migrations.RunPython(partition_samples, unpartition_samples, elidable=False),
    ]
