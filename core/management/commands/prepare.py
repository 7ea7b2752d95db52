"""Everything `make run` does before starting processes, in one Django start-up."""

from typing import Any

from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand
from django.db import connection

# Run when the app that provides them is installed; each is idempotent.
OPTIONAL_STEPS = ("load_catalog", "load_demo", "register_simulator_targets")


class Command(BaseCommand):
    help = "Compile translations, migrate, load the catalog and demo data, create the admin."

    def handle(self, *args: Any, **options: Any) -> None:
        available = get_commands()
        steps = [
            ("compile_translations", {}),
            ("migrate", {"interactive": False}),
            *((name, {}) for name in OPTIONAL_STEPS if name in available),
            ("ensure_admin", {}),
        ]
        for name, kwargs in steps:
            self.stdout.write(self.style.MIGRATE_HEADING(f"==> {name}"))
            call_command(name, stdout=self.stdout, stderr=self.stderr, **kwargs)
        if connection.vendor == "sqlite":
            # Readers need not wait for the worker's writes; the mode stays with the file.
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA journal_mode=WAL")
