"""The upgrade to hourly sample partitions (migration 0016) on a filled table (issue 19; figures,
no assertions): how long `migrate monitoring 0016` takes and how long polls' writes wait meanwhile.

A throw-away PostgreSQL database (`serveplan_bench_partmig_<pid>`, on DATABASE_URL's server,
loopback only) is migrated to 0015 and filled with BENCH_ROWS samples (default 5,000,000) over the
last 48 h, 20 targets (generate_series; the keys and indexes are built after the load, as a
restore would, then VACUUM ANALYZE). While `manage.py migrate monitoring 0016` runs in a
subprocess, a writer inserts one sample every 50 ms on a connection of its own, as a poll would:
the longest wait of one insert is how long polls were stopped. Then every row is counted (none
lost). The database is dropped at the end.

    scripts/test-env .venv/bin/python bench/bench_partition_migration.py [--root CHECKOUT]

--root runs the migrations of another checkout (e.g. a worktree of an earlier commit, to time
the earlier migration) with this Python.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
ROWS = int(os.environ.get("BENCH_ROWS", "5000000"))
TARGETS = 20
WRITE_EVERY_S = 0.05
TARGET_INDEX = "monitoring_sample_target_id_84b99116"
FK = "monitoring_sample_target_id_84b99116_fk_monitoring_target_id"


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url.replace("postgres://", "postgresql://", 1))
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _manage(root: Path, url: str, *args: str) -> float:
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings.test",
        DATABASE_URL=url,
        SERVEPLAN_VAR_DIR=tempfile.mkdtemp(prefix="serveplan-bench-partmig-"),
    )
    started = time.perf_counter()
    subprocess.run([sys.executable, "manage.py", *args], cwd=root, env=env, check=True)
    return time.perf_counter() - started


def _fill(conn, rows: int) -> None:
    per_target = rows // TARGETS
    step_s = 48 * 3600 / per_target
    conn.execute(
        "INSERT INTO monitoring_target (name, kind, base_url, poll_interval_s, enabled, token,"
        " last_status, last_error, last_error_kind, consecutive_failures, discovered_exporters,"
        " info, latest, created_at, updated_at, plan_scope, missed_polls, selector)"
        " SELECT 'bench-' || g, 'vllm', 'http://127.0.0.1:9', 15, false, '', '', '', '', 0,"
        " '[]', '{}', '{}', now(), now(), '', 0, '' FROM generate_series(1, %s) g",
        [TARGETS],
    )
    for statement in (
        f"ALTER TABLE monitoring_sample DROP CONSTRAINT {FK}",
        "ALTER TABLE monitoring_sample DROP CONSTRAINT monitoring_sample_key",
        "ALTER TABLE monitoring_sample DROP CONSTRAINT monitoring_sample_pkey",
        "DROP INDEX monitoring_sample_ts",
        f"DROP INDEX {TARGET_INDEX}",
    ):
        conn.execute(statement)
    # Ten series a target, each every 10 x step_s seconds, ending now.
    conn.execute(
        "INSERT INTO monitoring_sample (target_id, series, labels, ts, value)"
        " SELECT t.id, 'vllm.series_' || (g %% 10), '',"
        " now() - make_interval(secs => (%s - g) * %s), g %% 97"
        " FROM monitoring_target t, generate_series(1, %s) g",
        [per_target, step_s, per_target],
    )
    for statement in (
        "ALTER TABLE monitoring_sample ADD CONSTRAINT monitoring_sample_pkey PRIMARY KEY (id)",
        "ALTER TABLE monitoring_sample ADD CONSTRAINT monitoring_sample_key"
        " UNIQUE (target_id, series, ts, labels)",
        "CREATE INDEX monitoring_sample_ts ON monitoring_sample (ts)",
        f"CREATE INDEX {TARGET_INDEX} ON monitoring_sample (target_id)",
        f"ALTER TABLE monitoring_sample ADD CONSTRAINT {FK} FOREIGN KEY (target_id)"
        " REFERENCES monitoring_target (id) DEFERRABLE INITIALLY DEFERRED",
        "VACUUM ANALYZE monitoring_sample",
    ):
        conn.execute(statement)


class Writer(threading.Thread):
    """One sample every WRITE_EVERY_S, as a poll writes it; the time each insert took."""

    def __init__(self, url: str, target_id: int) -> None:
        super().__init__(daemon=True)
        self.url, self.target_id = url, target_id
        self.waits_s: list[float] = []
        self.errors: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            n = 0
            while not self.stop.is_set():
                n += 1
                started = time.perf_counter()
                try:
                    conn.execute(
                        "INSERT INTO monitoring_sample (target_id, series, labels, ts, value)"
                        " VALUES (%s, 'bench.write', %s, now(), 1)",
                        [self.target_id, str(n)],
                    )
                except psycopg.Error as exc:
                    self.errors.append(str(exc).splitlines()[0])
                self.waits_s.append(time.perf_counter() - started)
                time.sleep(WRITE_EVERY_S)


def main() -> None:
    import psycopg

    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose migrations run")
    args = parser.parse_args()
    base = os.environ.get("DATABASE_URL", "")
    host = urlsplit(base).hostname
    if not base.startswith(("postgres://", "postgresql://")) or host not in ("127.0.0.1", "::1"):
        sys.exit("DATABASE_URL must be a PostgreSQL server on loopback (scripts/test-env)")
    name = f"serveplan_bench_partmig_{os.getpid()}"
    admin, url = _with_database(base, "postgres"), _with_database(base, name)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        _manage(args.root, url, "migrate", "monitoring", "0015", "-v0")
        with psycopg.connect(url, autocommit=True) as conn:
            started = time.perf_counter()
            _fill(conn, ROWS)
            (rows,) = conn.execute("SELECT COUNT(*) FROM monitoring_sample").fetchone()
            (size,) = conn.execute(
                "SELECT pg_size_pretty(pg_total_relation_size('monitoring_sample'))"
            ).fetchone()
            (target_id,) = conn.execute("SELECT MIN(id) FROM monitoring_target").fetchone()
        print(f"filled {rows:,} rows ({size}) in {time.perf_counter() - started:.0f} s")
        writer = Writer(url, target_id)
        writer.start()
        time.sleep(1)
        took = _manage(args.root, url, "migrate", "monitoring", "0016", "-v0")
        time.sleep(1)
        writer.stop.set()
        writer.join()
        with psycopg.connect(url, autocommit=True) as conn:
            (after,) = conn.execute("SELECT COUNT(*) FROM monitoring_sample").fetchone()
            (kind,) = conn.execute(
                "SELECT relkind FROM pg_class WHERE oid = 'monitoring_sample'::regclass"
            ).fetchone()
        waits = sorted(writer.waits_s)
        written = len(waits) - len(writer.errors)
        print(f"migrate monitoring 0016 ({args.root}): {took:.1f} s; table kind {kind!r}")
        print(
            f"  writes meanwhile: {len(waits)}, longest wait {waits[-1]:.2f} s,"
            f" median {statistics.median(waits) * 1000:.1f} ms, failed {len(writer.errors)}"
            + (f" ({writer.errors[0]})" if writer.errors else "")
        )
        lost = rows + written - after
        print(f"  rows after: {after:,} (before {rows:,} + {written} written; lost {lost})")
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
