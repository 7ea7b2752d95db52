"""Register the simulator's targets (idempotent), so that `make run` shows live dashboards."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from inventory.models import Machine
from monitoring.models import Target, TargetKind
from monitoring.services import target_create, target_update
from monitoring.simulator import Simulator


class Command(BaseCommand):
    help = (
        "Create or update one monitoring target per simulated vLLM server, Ray cluster and "
        "machine GPU exporter (linked to the inventory machine of the same host name)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--port", type=int, default=settings.SIMULATOR_PORT, help="simulator base port"
        )
        parser.add_argument("--vllm", type=int, default=3, help="simulated vLLM servers")
        parser.add_argument("--no-ray", action="store_true")
        parser.add_argument(
            "--gpu-machines",
            type=int,
            default=None,
            help="simulated GPU machines (default: the demo fleet's five)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        created = updated = 0
        simulator = Simulator(
            port=options["port"],
            vllm_count=options["vllm"],
            ray=not options["no_ray"],
            gpu_machines=options["gpu_machines"],
        )
        sims = simulator.targets()
        # A simulated GPU exporter stands for the inventory machine of its host name.
        hosts = [sim.name for sim in sims if sim.kind == TargetKind.GPU]
        by_host = {m.hostname: m for m in Machine.objects.filter(hostname__in=hosts)}
        for sim in sims:
            machines: list[Machine] | None = None  # None: an update keeps the links it has
            if sim.kind == TargetKind.GPU:
                name = f"sim-gpu-{sim.name}"
                machines = [by_host[sim.name]] if sim.name in by_host else []
            else:
                name = sim.name if sim.name.startswith("sim-") else f"sim-{sim.name}"
            existing = Target.objects.defer("token").filter(name=name).first()
            if existing is None:
                target_create(
                    name=name, kind=sim.kind, base_url=sim.base_url, machines=machines or ()
                )
                created += 1
            elif existing.base_url != sim.base_url or existing.kind != sim.kind:
                target_update(
                    target=existing, kind=sim.kind, base_url=sim.base_url, machines=machines
                )
                updated += 1
        self.stdout.write(f"Simulator targets: {created} created, {updated} updated.")
