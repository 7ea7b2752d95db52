"""Create the demo plan and link the simulated llama-8b server to it (`make run` runs it)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from benchmarks.demo import load_demo_plan


class Command(BaseCommand):
    help = "Create the demo plan for the simulated llama-8b server and link the server to it."

    def handle(self, *args: Any, **options: Any) -> None:
        plan = load_demo_plan()
        if plan is None:
            self.stdout.write(
                "No demo plan: it needs the simulated llama-8b target "
                "(register_simulator_targets) and an admin (ensure_admin)."
            )
            return
        self.stdout.write(f"Demo plan: {plan.title} ({plan.public_id})")
