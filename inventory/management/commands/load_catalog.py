"""Load the shipped GPU types and model specs (idempotent; user edits are kept)."""

from typing import Any

from django.core.management.base import BaseCommand

from inventory.services import catalog_load


class Command(BaseCommand):
    help = "Load catalog GPU types and model specs; rows edited by a user are left alone."

    def handle(self, *args: Any, **options: Any) -> None:
        results = catalog_load()
        for kind, result in results.items():
            self.stdout.write(
                f"{kind}: {result.created} created, {result.updated} updated, "
                f"{result.unchanged} unchanged, {result.kept_user_edits} kept (edited by a user)"
            )
