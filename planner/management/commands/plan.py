"""python manage.py plan --spec FILE.json: print the engine's result for a spec as JSON."""

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from planner.engine.spec import SpecError
from planner.presentation.api import api_result
from planner.presentation.pool_api import pool_api_result
from planner.services import plan_evaluate
from planner.services.pools import is_pool_spec, pool_evaluate

EXIT_BAD_SPEC = 2


class Command(BaseCommand):
    help = (
        "Evaluate a plan spec (JSON file, or - for stdin) and print the result as JSON. The spec "
        "may name catalog/inventory model slugs and inventory hostnames, a pool or the fleet; "
        "with models: [...] it plans several models on one pool."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--spec", required=True, help="Path to the spec JSON file, or -.")
        parser.add_argument("--indent", type=int, default=2, help="JSON indentation (0: compact).")

    def handle(self, *args: Any, **options: Any) -> None:
        source = options["spec"]
        try:
            text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot read spec file {source}: {exc.strerror}") from exc
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CommandError(
                f"spec file {source} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                f"column {exc.colno}"
            ) from exc
        try:
            if is_pool_spec(spec):  # several models on one pool
                body = pool_api_result(pool_evaluate(spec=spec).result)
            else:
                body = api_result(plan_evaluate(spec=spec).result)
        except SpecError as exc:
            lines = "\n".join(f"  {field}: {message}" for field, message in exc.errors.items())
            raise CommandError(
                f"invalid spec {source}:\n{lines}", returncode=EXIT_BAD_SPEC
            ) from exc
        indent = options["indent"] or None
        self.stdout.write(json.dumps(body, indent=indent, ensure_ascii=False))
