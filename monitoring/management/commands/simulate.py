"""Run the built-in metrics simulator in the foreground until Ctrl-C."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from monitoring.simulator import Simulator


class Command(BaseCommand):
    help = (
        "Serve simulated vLLM servers and a two-node Ray cluster on 127.0.0.1 (for the demo and "
        "the tests). `register_simulator_targets` registers what it serves."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--port",
            type=int,
            default=settings.SIMULATOR_PORT,
            help="base port (setting SIMULATOR_PORT)",
        )
        parser.add_argument("--vllm", type=int, default=3, help="simulated vLLM servers")
        parser.add_argument("--no-ray", action="store_true", help="no Ray cluster")
        parser.add_argument("--no-faults", action="store_true", help="no restarts or slow scrapes")

    def handle(self, *args: Any, **options: Any) -> None:
        sim = Simulator(
            port=options["port"],
            vllm_count=options["vllm"],
            ray=not options["no_ray"],
            faults=not options["no_faults"],
        )
        try:
            targets = sim.start()
        except OSError as exc:
            raise CommandError(f"cannot listen on port {options['port']}: {exc}") from None
        for target in targets:
            self.stdout.write(f"{target.kind:5} {target.name:12} {target.base_url}  {target.note}")
        self.stdout.write("Simulator running; Ctrl-C stops it.")
        self.stdout.flush()
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
        finally:
            sim.stop()
