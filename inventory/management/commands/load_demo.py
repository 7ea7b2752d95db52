"""Create the demo fleet (idempotent): 2 × 8 × A800, 2 × 4 × A100 on 25 GbE, one RTX 4090."""

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from inventory.demo import load_demo
from inventory.models import GpuType


class Command(BaseCommand):
    help = "Create the demo pools and machines that do not exist yet (loads the catalog if empty)."

    def handle(self, *args: Any, **options: Any) -> None:
        if not GpuType.objects.exists():
            call_command("load_catalog", stdout=self.stdout)
        created = load_demo()
        self.stdout.write(
            f"demo: {created['pools']} pools and {created['machines']} machines created"
        )
