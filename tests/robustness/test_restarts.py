"""The workers survive a Redis restart and a PostgreSQL restart mid-run.

A real stack, as production runs it: a `celery worker` and a separate `celery beat` (the
DatabaseScheduler) polling simulated vLLM servers every 5 s through Redis into a PostgreSQL
database of our own (the worker is another process: it cannot see pytest's transaction). Then
the service is killed and started again, and the stored samples must show what a user relies
on:

- nothing lost: every sample stored before the restart is still there, and the polls that
  could not run meanwhile are counted as missed (the poll.missed series), not silently gone;
- nothing twice: no duplicate (target, series, labels, ts) row, and no more polls stored than
  the target's schedule has slots (a redelivered poll of a stored slot is skipped);
- polling resumed: every target has a successful poll within N poll intervals of the service's
  return, N taken from the poll schedule (the scheduler's tick, the slot grid and the expiry of
  a queued poll) plus, for Redis, the worker's next reconnection attempt (kombu's back-off);
  for PostgreSQL the intervals count from the scheduler's first tick that ran after the return
  (how long the services take to reconnect on a loaded machine is reported, not the schedule).
  No check counts fixed seconds of a loaded machine: a late poll is only a failure when the
  schedule itself could not have made it that late.

These tests stop the machine's shared Redis and PostgreSQL; `finally` blocks always start them
again (CI and everyone else on the machine depend on them). They run only when
SERVEPLAN_ALLOW_SERVICE_RESTARTS=1 (.ci/run sets it): elsewhere they skip (marker
`destructive`), and with it set a skip is a failure (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")
REDIS_DB = 12  # a database index of our own on REDIS_URL's server
TARGETS = 8
INTERVAL_S = 5
BASELINE_S = 20.0
REDIS_DOWN_S = 8.0
# How long the stack may take to come up (migrate, two Celery processes) on a loaded machine:
# setup, not a measured bound.
STARTUP_S = 300.0
# kombu's reconnection back-off (Connection.ensure_connection's defaults, which Celery's
# consumer uses): tries after 2, 4, 6 ... s, at most 30 s apart.
RECONNECT_START_S, RECONNECT_STEP_S, RECONNECT_MAX_S = 2.0, 2.0, 30.0


def recovery_intervals() -> int:
    """N: the poll intervals within which every target is polled again once the service (and
    the worker's connection) is back, from the poll schedule (monitoring.tasks):

    - the scheduler's next tick, which may itself be one tick late: 2 ticks;
    - the target's next slot on its grid, which the tick queues: 1 interval;
    - the queued poll may wait in the queue until its expiry, less than 1 interval.
    """
    from monitoring.tasks import SCHEDULER_INTERVAL_S, poll_expiry_s

    ticks = 2 * math.ceil(SCHEDULER_INTERVAL_S / INTERVAL_S)
    return ticks + 1 + math.ceil(poll_expiry_s(INTERVAL_S) / INTERVAL_S)


# After a PostgreSQL restart the schedule is counted from the scheduler's first tick that ran
# (its first `schedule_polls` that succeeded): until then no poll can be queued, and how long
# that takes is the services' recovery on this machine (the beat's and the worker's reconnect,
# CONN_HEALTH_CHECKS dropping dead connections), not the schedule. It is reported, and only
# bounded generously: a loaded CI machine once needed 32 s where an idle one needs 3.
SCHEDULER_BACK_WITHIN_S = 90.0


def reconnect_wait_s(outage_s: float) -> float:
    """The longest the worker waits after an outage of `outage_s` before it tries the broker
    again: the time from the outage's end to kombu's next try."""
    tried_at, step = 0.0, RECONNECT_START_S
    while tried_at < outage_s:
        tried_at += step
        step = min(step + RECONNECT_STEP_S, RECONNECT_MAX_S)
    return tried_at - outage_s + step  # a try that fails just as the service returns


REDIS_START = [
    "redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379",
    "--save", "", "--appendonly", "no", "--dir", "/var/lib/redis",
    "--logfile", "/var/log/redis/ci.log",
]  # fmt: skip

pytestmark = [pytest.mark.integration, pytest.mark.destructive, pytest.mark.enable_socket]


# --- the shared services -------------------------------------------------------------------


def redis_up() -> bool:
    done = subprocess.run(
        ["redis-cli", "-p", "6379", "ping"], capture_output=True, text=True, check=False
    )
    return done.returncode == 0 and "PONG" in done.stdout


def wait_for(check, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout_s:g} s")
        time.sleep(0.2)


def redis_start() -> None:
    """Start the machine's Redis exactly as CI does (no-op when it answers)."""
    if redis_up():
        return
    Path("/var/lib/redis").mkdir(parents=True, exist_ok=True)
    Path("/var/log/redis").mkdir(parents=True, exist_ok=True)
    subprocess.run(REDIS_START, check=False)
    wait_for(redis_up, 30, "Redis answering")


def pg_cluster() -> str:
    return sorted(os.listdir("/etc/postgresql"))[0]


def pg_up() -> bool:
    done = subprocess.run(
        ["pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432"], capture_output=True, check=False
    )
    return done.returncode == 0


def pg_ctl(action: str) -> None:
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", pg_cluster(), "main", action],
        capture_output=True,
        check=False,
        timeout=120,
    )


def pg_start() -> None:
    """Start the machine's PostgreSQL cluster (no-op when it answers)."""
    if pg_up():
        return
    pg_ctl("start")
    wait_for(pg_up, 60, "PostgreSQL accepting connections")


# --- the stack under test ------------------------------------------------------------------


def _with_path(url: str, path: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, parts.fragment))


def _pg_connect(url: str):
    import psycopg

    return psycopg.connect(url.replace("postgres://", "postgresql://", 1), autocommit=True)


@dataclass
class Stack:
    db_url: str
    env: dict[str, str]
    logs: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def query(self, sql: str, *params: object) -> list[tuple]:
        """Run `sql` on the stack's database with a fresh connection (survives restarts)."""
        deadline = time.monotonic() + 60
        while True:
            try:
                with _pg_connect(self.db_url) as conn:
                    return conn.execute(sql, params).fetchall()
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def successful_polls(self) -> dict[int, list[datetime]]:
        rows = self.query(
            "SELECT target_id, ts FROM monitoring_sample "
            "WHERE series = 'poll.up' AND value = 1 ORDER BY target_id, ts"
        )
        polls: dict[int, list[datetime]] = {}
        for target_id, ts in rows:
            polls.setdefault(target_id, []).append(ts)
        return polls

    def poll_times(self) -> dict[int, list[datetime]]:
        """When each target's polls ran, succeeded or failed (poll.up 1 or 0)."""
        rows = self.query(
            "SELECT target_id, ts FROM monitoring_sample WHERE series = 'poll.up' "
            "ORDER BY target_id, ts"
        )
        polls: dict[int, list[datetime]] = {}
        for target_id, ts in rows:
            polls.setdefault(target_id, []).append(ts)
        return polls

    def duplicates(self) -> list[tuple]:
        return self.query(
            "SELECT target_id, series, labels, ts, COUNT(*) FROM monitoring_sample "
            "GROUP BY target_id, series, labels, ts HAVING COUNT(*) > 1 LIMIT 5"
        )

    def failed_polls(self) -> int:
        return self.query(
            "SELECT COUNT(*) FROM monitoring_sample WHERE series = 'poll.up' AND value = 0"
        )[0][0]

    def rows_before(self, when: datetime) -> int:
        return self.query("SELECT COUNT(*) FROM monitoring_sample WHERE ts < %s", when)[0][0]

    def missed_after(self, when: datetime) -> dict[int, float]:
        """The missed polls each target's polls since `when` recorded."""
        rows = self.query(
            "SELECT target_id, SUM(value) FROM monitoring_sample "
            "WHERE series = 'poll.missed' AND ts >= %s GROUP BY target_id",
            when,
        )
        return {target_id: float(total) for target_id, total in rows}

    def log_count(self, name: str, text: str) -> int:
        return (self.logs / f"{name}.log").read_text(errors="replace").count(text)

    def log_tail(self) -> str:
        out = []
        for path in sorted(self.logs.glob("*.log")):
            out.append(f"--- {path.name}\n{path.read_text(errors='replace')[-2500:]}")
        return "\n".join(out)

    def scheduler_ticks(self) -> list[datetime]:
        """When the worker finished each `schedule_polls` that succeeded (from its log)."""
        ticks = []
        for line in (self.logs / "worker.log").read_text(errors="replace").splitlines():
            if "monitoring.schedule_polls[" in line and "succeeded" in line:
                # Celery logs the machine's local time: a naive stamp read as local.
                ticks.append(datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").astimezone(UTC))
        return ticks

    def wait_for_scheduler_tick(self, *, after: datetime) -> datetime:
        """Wait for the first scheduler tick that succeeds after `after`; return when it ran."""
        found: list[datetime] = []

        def ticked() -> bool:
            found[:] = [t for t in self.scheduler_ticks() if t >= after]
            return bool(found)

        wait_for(
            ticked,
            SCHEDULER_BACK_WITHIN_S,
            f"a scheduler tick after {after:%H:%M:%S}\n{self.timeline(after)}",
        )
        return found[0]

    def timeline(self, since: datetime) -> str:
        """What a failed check needs: each target's poll outcomes and state, and the errors and
        scheduler ticks the worker and the beat logged since `since`."""
        rows = self.query(
            "SELECT target_id, ts, value FROM monitoring_sample WHERE series = 'poll.up' "
            "AND ts >= %s ORDER BY target_id, ts",
            since,
        )
        polls: dict[int, list[str]] = {}
        for target_id, ts, value in rows:
            polls.setdefault(target_id, []).append(f"{ts:%H:%M:%S}{'' if value else ' FAIL'}")
        states = self.query(
            "SELECT id, last_status, last_error_kind, consecutive_failures, next_poll_at "
            "FROM monitoring_target ORDER BY id"
        )
        out = [f"polls since {since:%H:%M:%S} (UTC): {polls}", f"targets: {states}"]
        since_local = since.astimezone().strftime("%Y-%m-%d %H:%M:%S")
        for name in ("worker", "beat"):
            lines = (self.logs / f"{name}.log").read_text(errors="replace").splitlines()
            picked = [
                line[:220]
                for line in lines
                if line[:19] >= since_local
                and (
                    "ERROR" in line
                    or "WARNING" in line
                    or "schedule_polls" in line
                    or "exited" in line
                    or "Worker" in line
                )
            ]
            out.append(
                f"--- {name}.log since then ({len(picked)} lines):\n" + "\n".join(picked[:80])
            )
        return "\n".join(out)

    def alive(self) -> None:
        for name, proc in self.procs.items():
            assert proc.poll() is None, f"{name} exited ({proc.returncode})\n{self.log_tail()}"


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _spawn(stack: Stack, name: str, args: list[str]) -> None:
    log = (stack.logs / f"{name}.log").open("w")
    stack.procs[name] = subprocess.Popen(
        args, cwd=ROOT, env=stack.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    log.close()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="module")
def one_drill_at_a_time() -> Iterator[None]:
    """Hold a machine-wide lock while this module's stack and drills run: drills on two xdist
    workers would take Redis down in the middle of the PostgreSQL drill's recovery window (seen
    once in a full run), or under the other worker's stack while it starts."""
    import fcntl
    import tempfile

    with open(Path(tempfile.gettempdir()) / "serveplan-restart-drill.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def stack(tmp_path_factory, one_drill_at_a_time) -> Iterator[Stack]:
    """Simulator, migrated database of our own, targets, then a worker and a beat process."""
    if os.environ.get("SERVEPLAN_ALLOW_SERVICE_RESTARTS") != "1":
        pytest.skip(
            "restarts the machine's Redis and PostgreSQL: SERVEPLAN_ALLOW_SERVICE_RESTARTS=1"
        )
    if not REDIS_URL or not DATABASE_URL.startswith(("postgres://", "postgresql://")):
        pytest.fail("REDIS_URL and a PostgreSQL DATABASE_URL are needed (CI sets both).")
    redis_start()
    pg_start()
    tmp = tmp_path_factory.mktemp("restarts")
    name = f"serveplan_restarts_{uuid.uuid4().hex[:8]}"
    admin_url = _with_path(DATABASE_URL, "/postgres")
    with _pg_connect(admin_url) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    db_url = _with_path(DATABASE_URL, f"/{name}")
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=db_url,
        REDIS_URL=_with_path(REDIS_URL, f"/{REDIS_DB}"),
        SERVEPLAN_VAR_DIR=str(tmp / "var"),
        SECRET_KEY="restart-test-secret",
        DEBUG="false",
        LOG_LEVEL="INFO",
    )
    stack = Stack(db_url=db_url, env=env, logs=tmp)
    try:
        subprocess.run(
            ["redis-cli", "-n", str(REDIS_DB), "flushdb"], capture_output=True, check=False
        )
        sim = subprocess.Popen(
            [sys.executable, "-m", "monitoring.simulator", "--port", "0", "--no-ray",
             "--no-faults", "--vllm", str(TARGETS), "--gpu-machines", "0"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True,
        )  # fmt: skip
        stack.procs["simulator"] = sim
        assert sim.stdout is not None
        targets = json.loads(sim.stdout.readline())
        _manage(env, "migrate", "--noinput")
        script = "from monitoring.services import target_create\n" + "".join(
            f"target_create(name={t['name']!r}, kind={t['kind']!r}, base_url={t['base_url']!r},"
            f" poll_interval_s={INTERVAL_S})\n"
            for t in targets
        )
        _manage(env, "shell", "-c", script)
        celery = [sys.executable, "-m", "celery", "-A", "config"]
        _spawn(stack, "worker", [*celery, "worker", "--concurrency", "2", "--loglevel", "INFO",
                                 "-n", f"restarts-{uuid.uuid4().hex[:6]}@%h"])  # fmt: skip
        _spawn(stack, "beat", [*celery, "beat", "--loglevel", "INFO",
                               "--pidfile", str(tmp / "beat.pid")])  # fmt: skip
        # Every target polled at least twice: the stack is up.
        wait_for(
            lambda: sum(len(v) >= 2 for v in stack.successful_polls().values()) == TARGETS,
            STARTUP_S,
            f"two successful polls of each target\n{stack.log_tail()}",
        )
        yield stack
    finally:
        for proc in stack.procs.values():
            _stop(proc)
        redis_start()
        pg_start()
        with _pg_connect(admin_url) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        subprocess.run(
            ["redis-cli", "-n", str(REDIS_DB), "flushdb"], capture_output=True, check=False
        )


# --- the checks ----------------------------------------------------------------------------


@dataclass
class Outage:
    """What a test did to a service: when it went down and came back, and what was stored."""

    down_at: datetime
    back_at: datetime
    rows_before: int
    reconnect_wait_s: float = 0.0  # the worker's broker back-off (Redis only)
    # PostgreSQL: when the scheduler's first tick after the return ran (the schedule's origin).
    scheduler_back_at: datetime | None = None

    @property
    def origin(self) -> datetime:
        return self.scheduler_back_at or self.back_at

    @property
    def bound_s(self) -> float:
        return self.reconnect_wait_s + recovery_intervals() * INTERVAL_S


def wait_for_recovery(stack: Stack, outage: Outage) -> None:
    """Wait until every target has two polls after the return, or well past the bound (the
    assertions then say which target is late and by how much)."""

    def resumed() -> bool:
        polls = stack.successful_polls().values()
        return sum(sum(t >= outage.back_at for t in times) >= 2 for times in polls) == TARGETS

    with contextlib.suppress(AssertionError):
        wait_for(resumed, outage.bound_s + 2 * INTERVAL_S + 60, "")


def assert_recovered(stack: Stack, outage: Outage) -> dict[str, float]:
    """Check nothing lost, nothing twice and the resumption; return figures."""
    stack.alive()
    assert stack.duplicates() == [], "a sample was written twice"
    # A poll under way at the outage may still add rows stamped before it: never fewer.
    assert stack.rows_before(outage.down_at) >= outage.rows_before, "stored samples were lost"
    polls = stack.successful_polls()
    assert len(polls) == TARGETS, polls.keys()
    first_after: dict[int, float] = {}
    for target_id, times in polls.items():
        after = [t for t in times if t >= outage.back_at]
        assert after, f"target {target_id} never polled after the restart\n{stack.log_tail()}"
        first_after[target_id] = (after[0] - outage.origin).total_seconds()
        # One slot per grid cell of the target's schedule: a poll stored twice is one too many.
        span_s = (times[-1] - times[0]).total_seconds()
        assert len(times) <= span_s / INTERVAL_S + 2, (target_id, len(times), span_s)
    worst = max(first_after.values())
    if worst > outage.bound_s:
        # pytest.fail, not assert: an assertion's message is cut short, and this one must carry
        # the whole timeline to be diagnosed from CI's output alone.
        pytest.fail(
            f"a target waited {worst:.1f} s after the schedule resumed ({outage.origin:%H:%M:%S.%f}"
            f", the service was back at {outage.back_at:%H:%M:%S.%f}), more than "
            f"{recovery_intervals()} intervals of {INTERVAL_S} s"
            f" + {outage.reconnect_wait_s:.1f} s of reconnect back-off\n"
            f"first poll after it, per target: {first_after}\n{stack.timeline(outage.down_at)}",
            pytrace=False,
        )
    # The outage's gap is accounted: a poll that came over three intervals after the target's
    # previous one (whatever their outcome: the gap is between polls that ran, and one may have
    # run while the service was coming back) counted misses.
    missed = stack.missed_after(outage.down_at)
    for target_id, times in stack.poll_times().items():
        gaps = [
            (b - a).total_seconds()
            for a, b in zip(times, times[1:], strict=False)
            if b >= outage.down_at
        ]
        if gaps and max(gaps) > 3 * INTERVAL_S:
            assert missed.get(target_id, 0) >= 1, (target_id, gaps, missed)
    return {
        "scheduler_back_after_s": round((outage.origin - outage.back_at).total_seconds(), 1),
        "first_poll_after_schedule_s_max": round(worst, 1),
        "bound_s": round(outage.bound_s, 1),
        "polls_stored": sum(len(t) for t in polls.values()),
        "failed_polls": stack.failed_polls(),
        "missed_counted": sum(missed.values()),
        "broker_lost_logged": stack.log_count("worker", "Connection to broker lost"),
        "db_errors_logged": stack.log_count("worker", "OperationalError"),
    }


def test_polling_survives_a_redis_restart(stack: Stack):
    time.sleep(BASELINE_S)
    stack.alive()
    down_at = datetime.now(UTC)
    rows_before = stack.rows_before(down_at)
    try:
        subprocess.run(["redis-cli", "-p", "6379", "shutdown", "nosave"], check=False)
        wait_for(lambda: not redis_up(), 30, "Redis stopping")
        time.sleep(REDIS_DOWN_S)
    finally:
        redis_start()
    back_at = datetime.now(UTC)
    outage = Outage(
        down_at=down_at,
        back_at=back_at,
        rows_before=rows_before,
        reconnect_wait_s=reconnect_wait_s((back_at - down_at).total_seconds()),
    )
    wait_for_recovery(stack, outage)
    figures = assert_recovered(stack, outage)
    print(f"redis restart: {figures}")


def test_polling_survives_a_postgresql_restart(stack: Stack):
    time.sleep(BASELINE_S)
    stack.alive()
    down_at = datetime.now(UTC)
    rows_before = stack.rows_before(down_at)
    try:
        pg_ctl("restart")
    finally:
        pg_start()
        # This pytest process's own connections died with the server: later tests reconnect.
        from django.db import connections

        for conn in connections.all(initialized_only=True):
            conn.close()
    back_at = datetime.now(UTC)
    scheduler_back_at = stack.wait_for_scheduler_tick(after=back_at)
    outage = Outage(
        down_at=down_at,
        back_at=back_at,
        rows_before=rows_before,
        scheduler_back_at=scheduler_back_at,
    )
    wait_for_recovery(stack, outage)
    figures = assert_recovered(stack, outage)
    print(f"postgresql restart: {figures}")
