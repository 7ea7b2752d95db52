"""Checks behind /healthz: the database, the broker and the worker heartbeat.

The apps add their own sections (monitoring: whether polls run on time) with register_section
in their AppConfig.ready: the ground floor calls them without importing any app.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from celery import current_app as celery_app  # the project's app (config.celery sets it current)
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from core.models import WorkerHeartbeat


@dataclass(frozen=True, slots=True)
class Section:
    """What an app's health section found: its figures, and a sentence when it runs behind."""

    details: dict[str, Any]
    degraded: str = ""


# name -> check; a check runs only when the database answers.
_SECTIONS: dict[str, Callable[[], Section]] = {}


def register_section(name: str, check: Callable[[], Section]) -> None:
    """Add the section `name` to /healthz: `check()` runs on every health check."""
    _SECTIONS[name] = check


@dataclass(frozen=True, slots=True)
class Health:
    database: str
    broker: str
    worker_heartbeat_age_s: float | None
    problems: tuple[str, ...]
    # Running but behind (polls late or missed): reported, still answered with 200.
    degraded: tuple[str, ...] = ()
    # Each registered section's figures (None when the database could not be asked).
    sections: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_database() -> str:
    """Return "ok" or the error the database raised."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - any failure is reported, not raised
        return f"error: {exc.__class__.__name__}: {exc}".strip()
    try:
        # A reachable database without our tables (migrate not run yet) is not healthy either;
        # the savepoint keeps a failed query from spoiling the request's transaction.
        with transaction.atomic():
            WorkerHeartbeat.objects.exists()
    except DatabaseError as exc:
        return f"error: tables missing, run `manage.py migrate` ({exc.__class__.__name__})"
    return "ok"


def check_broker() -> str:
    """Return "ok" or why the Celery broker cannot be reached."""
    url = celery_app.conf.broker_url or ""
    if url.startswith("filesystem://"):
        folder = Path(celery_app.conf.broker_transport_options.get("data_folder_in", ""))
        if folder.is_dir() and _is_writable(folder):
            return "ok"
        return f"error: broker folder {folder} is missing or not writable"
    try:
        with celery_app.connection_for_write(connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001
        return f"error: {exc.__class__.__name__}: {exc}".strip()
    return "ok"


def _is_writable(folder: Path) -> bool:
    probe = folder / ".healthz"
    try:
        probe.write_text("ok")
        probe.unlink()
    except OSError:
        return False
    return True


def heartbeat_age_s() -> float | None:
    """Return the seconds since the newest worker heartbeat, or None if there never was one."""
    latest = WorkerHeartbeat.objects.order_by("-beat_at").values_list("beat_at", flat=True).first()
    if latest is None:
        return None
    return round((timezone.now() - latest).total_seconds(), 1)


def check_health() -> Health:
    """Run every check and name each part that is not fine."""
    problems = []
    database = check_database()
    if database != "ok":
        problems.append(f"database: {database}")
    broker = check_broker()
    if broker != "ok":
        problems.append(f"broker: {broker}")
    age = heartbeat_age_s() if database == "ok" else None
    if age is None:
        problems.append("worker: no heartbeat recorded yet (is a Celery worker with beat running?)")
    elif age > settings.HEARTBEAT_MAX_AGE_S:
        problems.append(
            f"worker: last heartbeat {age:.0f} s ago (more than {settings.HEARTBEAT_MAX_AGE_S} s)"
        )
    degraded: list[str] = []
    sections: dict[str, dict[str, Any] | None] = dict.fromkeys(_SECTIONS)
    if database == "ok":
        for name, check in _SECTIONS.items():
            section = check()
            sections[name] = section.details
            if section.degraded:
                degraded.append(f"{name}: {section.degraded}")
    return Health(
        database=database,
        broker=broker,
        worker_heartbeat_age_s=age,
        problems=tuple(problems),
        degraded=tuple(degraded),
        sections=sections,
    )
