"""`manage.py bench TARGET [--plan PUBLIC_ID]`: benchmark a monitored server now, here."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmarks import services
from benchmarks.exports import run_document
from monitoring.models import Target
from planner.models import Plan


class Command(BaseCommand):
    help = (
        "Run a load benchmark against a vLLM target (by name or id) as the worker does, store "
        "it and print its summary; the linked plan's workload is the default."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("target", help="target name or id")
        parser.add_argument("--plan", help="plan public id (default: the target's plan)")
        parser.add_argument("--requests", type=int)
        parser.add_argument("--concurrency", help="levels, e.g. 1,4,16")
        parser.add_argument("--arrival", choices=("closed", "poisson", "burst"))
        parser.add_argument("--request-rate", type=float, dest="request_rate_rps")
        parser.add_argument("--input-tokens", type=int)
        parser.add_argument("--output-tokens", type=int)
        parser.add_argument("--max-duration", type=int, dest="max_duration_s")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        ref = options["target"]
        target = Target.objects.filter(name=ref).first() or (
            Target.objects.filter(pk=int(ref)).first() if ref.isdigit() else None
        )
        if target is None:
            raise CommandError(f"no target {ref!r}")
        plan = None
        if options["plan"]:
            try:
                plan = Plan.objects.filter(public_id=options["plan"]).first()
            except ValidationError:
                plan = None
            if plan is None:
                raise CommandError(f"no plan {options['plan']!r}")
        keys = ("requests", "concurrency", "arrival", "request_rate_rps", "input_tokens",
                "output_tokens", "max_duration_s")  # fmt: skip
        data = {k: options[k] for k in keys if options.get(k) is not None}
        try:
            run = services.run_create(target=target, plan=plan, data=data, actor=None,
                                      enqueue=False)  # fmt: skip
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in
                                         exc.message_dict.items())) from None  # fmt: skip
        services.run_execute(run_id=run.pk)
        run.refresh_from_db()
        if options["format"] == "json":
            document = run_document(run)
            document.pop("records")
            self.stdout.write(json.dumps(document, indent=1))
            return
        self._print(run)

    def _print(self, run: Any) -> None:
        self.stdout.write(f"Run {run.public_id}: {run.status} · {run.model_name}")
        if run.error:
            self.stdout.write(run.error)
        for level in run.levels:
            s = level["summary"]
            self.stdout.write(
                f"in flight {level['concurrency'] or '-'}: {s['completed']}/{s['requests']} "
                f"completed, {s['failed']} failed, {s['total_input_tokens']} input and "
                f"{s['total_output_tokens']} output tokens in {s['duration_s']:.2f} s; "
                f"TTFT median {s['ttft']['median_ms']:.1f} ms p99 {s['ttft']['p99_ms']:.1f} ms; "
                f"TPOT median {s['tpot']['median_ms']:.2f} ms; "
                f"{s['request_throughput_rps']:.2f} req/s, "
                f"{s['output_throughput_tok_s']:.1f} output tok/s"
            )
        for level in run.comparison.get("levels", []):
            cells = ", ".join(
                f"{name} predicted {row['predicted']:.2f} measured {row['measured']:.2f} "
                f"({row['deviation_pct']} %, {'inside' if row['inside_band'] else 'outside'})"
                for name, row in level.items()
                if name != "concurrency"
            )
            self.stdout.write(f"plan at {level['concurrency'] or '-'}: {cells}")
