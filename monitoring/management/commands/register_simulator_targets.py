"""Register the simulator's targets (idempotent), so that `make run` shows live dashboards."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from monitoring.models import Target
from monitoring.services import target_create, target_update
from monitoring.simulator import Simulator


class Command(BaseCommand):
    help = "Create or update one monitoring target per simulated vLLM server and Ray cluster."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--port", type=int, default=settings.SIMULATOR_PORT, help="simulator base port"
        )
        parser.add_argument("--vllm", type=int, default=3, help="simulated vLLM servers")
        parser.add_argument("--no-ray", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        created = updated = 0
        simulator = Simulator(
            port=options["port"], vllm_count=options["vllm"], ray=not options["no_ray"]
        )
        for sim in simulator.targets():
            name = f"sim-{sim.name}" if not sim.name.startswith("sim-") else sim.name
            existing = Target.objects.defer("token").filter(name=name).first()
            if existing is None:
                target_create(name=name, kind=sim.kind, base_url=sim.base_url)
                created += 1
            elif existing.base_url != sim.base_url or existing.kind != sim.kind:
                target_update(target=existing, kind=sim.kind, base_url=sim.base_url)
                updated += 1
        self.stdout.write(f"Simulator targets: {created} created, {updated} updated.")
