"""Print what the poller would store from a URL or a saved payload (the poller's code path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from monitoring import conf
from monitoring.polling import http_client
from monitoring.scrape import KINDS, from_text, scrape_once
from monitoring.scrape.fetch import Allowlist


class Command(BaseCommand):
    help = (
        "Fetch a vLLM server (base URL), a Ray dashboard or exporter URL, or read a saved "
        "payload file, and print the series the poller would store from it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", help="http(s) URL, or the path of a saved /metrics payload")
        parser.add_argument("--kind", choices=KINDS, required=True)
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument(
            "--token-env",
            default="",
            help="name of an environment variable holding a bearer token (never a literal)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        source: str = options["source"]
        kind: str = options["kind"]
        token = None
        if options["token_env"]:
            import os

            token = os.environ.get(options["token_env"]) or None
        if source.startswith(("http://", "https://")):
            # The operator at a shell reaches any address already: the command skips the
            # product's allowlist (cloud metadata addresses stay refused).
            policy = conf.fetch_policy(allowlist=Allowlist.anywhere())
            result = scrape_once(
                source, kind, None, policy=policy, token=token, client=http_client()
            )
        else:
            path = Path(source)
            if not path.is_file():
                raise CommandError(f"{source}: no such file (give an http(s) URL or a file path)")
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"{source}: cannot read: {exc}") from None
            result = from_text(text, kind, source=str(path))
        if options["format"] == "json":
            self.stdout.write(json.dumps(result.as_dict(), indent=2, sort_keys=True))
        else:
            self._print_text(result)
        if not result.ok:
            raise CommandError("; ".join(f"{e.kind}: {e.message}" for e in result.errors))

    def _print_text(self, result: Any) -> None:
        status = "ok" if result.ok else "FAILED"
        self.stdout.write(f"{result.kind} {result.source}: {status}, {len(result.samples)} series")
        for sample in sorted(result.samples, key=lambda s: s.series_id):
            self.stdout.write(f"  {sample.series_id} = {sample.value:.6g}")
        for error in result.errors:
            self.stdout.write(f"  error ({error.kind}) {error.where}: {error.message}")
        for warning in result.warnings:
            self.stdout.write(f"  warning: {warning}")
        if result.ok:
            self.stdout.write(
                "  (rates and quantiles need two polls: the poller derives them from the "
                "previous raw snapshot it keeps per target)"
            )
