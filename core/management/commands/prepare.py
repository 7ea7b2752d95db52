"""Everything `make run` does before starting processes, in one Django start-up."""

import hashlib
import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand
from django.db import connection

# Run when the app that provides them is installed; each is idempotent.
OPTIONAL_STEPS = ("load_catalog", "load_demo", "register_simulator_targets")
# Run after the admin exists (the demo plan is the admin's).
LATE_OPTIONAL_STEPS = ("load_demo_plan",)


def _static_fingerprint() -> str:
    """Return a digest of every static source file's path, size and modification time."""
    digest = hashlib.sha256()
    for finder in finders.get_finders():
        for path, storage in finder.list(["CVS", ".*", "*~"]):
            stat = os.stat(storage.path(path))
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class Command(BaseCommand):
    help = (
        "Compile translations, collect static files, migrate, load the catalog and demo data, "
        "create the admin."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        available = get_commands()
        steps = [
            ("compile_translations", {}),
            ("migrate", {"interactive": False}),
            *((name, {}) for name in OPTIONAL_STEPS if name in available),
            ("ensure_admin", {}),
            *((name, {}) for name in LATE_OPTIONAL_STEPS if name in available),
        ]
        for name, kwargs in steps:
            self.stdout.write(self.style.MIGRATE_HEADING(f"==> {name}"))
            call_command(name, stdout=self.stdout, stderr=self.stderr, **kwargs)
            if name == "compile_translations":
                self._collect_static()
        if connection.vendor == "sqlite":
            # Readers need not wait for the worker's writes; the mode stays with the file.
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA journal_mode=WAL")

    def _collect_static(self) -> None:
        """Collect hashed, compressed static files, only when a source changed (it takes ~15 s
        of CPU: Brotli and gzip copies of every file)."""
        stamp = Path(settings.STATIC_ROOT) / ".sources"
        fingerprint = _static_fingerprint()
        if stamp.exists() and stamp.read_text() == fingerprint:
            return
        self.stdout.write(self.style.MIGRATE_HEADING("==> collectstatic"))
        call_command("collectstatic", interactive=False, verbosity=0, clear=True)
        stamp.write_text(fingerprint)
