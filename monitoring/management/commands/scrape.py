"""Print what the poller would store from a URL or a saved payload (the poller's code path).

With two captures (before and after), the second is derived against the first as the poller
does: rates, hit ratios and quantiles, printed with the raw counters they come from.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from monitoring import conf
from monitoring.polling.run import http_client
from monitoring.scrape import KINDS, ScrapeResult, from_text, scrape_once
from monitoring.scrape.fetch import Allowlist
from monitoring.scrape.keys import BY_KEY

DEFAULT_ELAPSED_S = 15.0


class Command(BaseCommand):
    help = (
        "Fetch a vLLM server (base URL), a Ray dashboard or exporter URL, a GPU exporter "
        "(dcgm-exporter, nvidia_gpu_exporter), or read a saved payload file, and print the "
        "series the poller would store from it. Give two captures (before, after) to see the "
        "rates, ratios and quantiles the poller derives from the pair."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "sources",
            nargs="+",
            metavar="SOURCE",
            help="http(s) URL or saved payload path; a second one is the later capture",
        )
        parser.add_argument("--kind", choices=KINDS, required=True)
        parser.add_argument("--format", choices=("text", "json"), default="text")
        parser.add_argument(
            "--elapsed-s",
            type=float,
            default=None,
            help="seconds between two saved captures (default: their files' modification "
            f"times, or {DEFAULT_ELAPSED_S:g} s when those are equal)",
        )
        parser.add_argument(
            "--token-env",
            default="",
            help="name of an environment variable holding a bearer token (never a literal)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        sources: list[str] = options["sources"]
        if len(sources) > 2:
            raise CommandError("give one source, or two captures of the same target")
        if options["elapsed_s"] is not None and options["elapsed_s"] <= 0:
            raise CommandError("--elapsed-s must be positive")
        kind: str = options["kind"]
        token = None
        if options["token_env"]:
            token = os.environ.get(options["token_env"]) or None
        times = self._times(sources, options["elapsed_s"])
        first = self._capture(sources[0], kind, token, ts=times[0], previous=None)
        result = first
        if len(sources) == 2:
            if not first.ok:
                self._report(first, options["format"])
            previous = first.raw.to_json() if first.raw is not None else None
            result = self._capture(sources[1], kind, token, ts=times[1], previous=previous)
        self._report(result, options["format"], before=first if len(sources) == 2 else None)

    def _times(self, sources: list[str], elapsed_s: float | None) -> list[float | None]:
        """Capture times of saved files: their mtimes, or `elapsed_s` apart (URLs: now)."""
        if len(sources) == 1 or sources[0].startswith(("http://", "https://")):
            return [None, None]
        if elapsed_s is None:
            mtimes = [self._path(s).stat().st_mtime for s in sources]
            if mtimes[1] > mtimes[0]:
                return mtimes
            elapsed_s = DEFAULT_ELAPSED_S
        start = time.time() - elapsed_s
        return [start, start + elapsed_s]

    def _path(self, source: str) -> Path:
        path = Path(source)
        if not path.is_file():
            raise CommandError(f"{source}: no such file (give an http(s) URL or a file path)")
        return path

    def _capture(
        self,
        source: str,
        kind: str,
        token: str | None,
        *,
        ts: float | None,
        previous: dict[str, Any] | None,
    ) -> ScrapeResult:
        if source.startswith(("http://", "https://")):
            # The operator at a shell reaches any address already: the command skips the
            # product's allowlist (cloud metadata addresses stay refused).
            return scrape_once(
                source,
                kind,
                previous,
                policy=conf.fetch_policy(allowlist=Allowlist.anywhere()),
                token=token,
                client=http_client(),
            )
        path = self._path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{source}: cannot read: {exc}") from None
        return from_text(text, kind, source=str(path), ts=ts, previous=previous)

    def _report(self, result: ScrapeResult, fmt: str, before: ScrapeResult | None = None) -> None:
        if fmt == "json":
            body = result.as_dict()
            if before is not None:
                body["before"] = before.as_dict()
            self.stdout.write(json.dumps(body, indent=2, sort_keys=True))
        else:
            self._print_text(result, before)
        if not result.ok:
            raise CommandError("; ".join(f"{e.kind}: {e.message}" for e in result.errors))

    def _print_text(self, result: ScrapeResult, before: ScrapeResult | None) -> None:
        status = "ok" if result.ok else "FAILED"
        self.stdout.write(f"{result.kind} {result.source}: {status}, {len(result.samples)} series")
        derived = [s for s in result.samples if _is_derived(s.key)]
        gauges = [s for s in result.samples if not _is_derived(s.key)]
        for sample in sorted(gauges, key=lambda s: s.series_id):
            self.stdout.write(f"  {sample.series_id} = {sample.value:.6g}")
        if before is not None:
            elapsed = result.ts - before.ts
            self.stdout.write(f"derived between the two captures ({elapsed:.3g} s apart):")
            for sample in sorted(derived, key=lambda s: s.series_id):
                self.stdout.write(f"  {sample.series_id} = {sample.value:.6g}")
            if not derived:
                self.stdout.write(
                    "  (none: no counter moved forward, the server restarted between the "
                    "captures, or this kind has no counters)"
                )
            self._print_raw(before, result)
        for error in result.errors:
            self.stdout.write(f"  error ({error.kind}) {error.where}: {error.message}")
        for warning in result.warnings:
            self.stdout.write(f"  warning: {warning}")
        if result.ok and before is None and result.raw and result.raw.counters:
            self.stdout.write(
                "  (rates and quantiles need two polls: give a second capture, as the poller "
                "derives them from the previous raw snapshot it keeps per target)"
            )

    def _print_raw(self, before: ScrapeResult, after: ScrapeResult) -> None:
        """Print the raw counters and histogram counts of both captures, and their change."""
        if before.raw is None or after.raw is None:
            return
        counters = sorted(set(before.raw.counters) | set(after.raw.counters))
        histograms = sorted(set(before.raw.histograms) | set(after.raw.histograms))
        if not counters and not histograms:
            return
        self.stdout.write("raw counters (before -> after, change):")
        for sid in counters:
            a, b = before.raw.counters.get(sid), after.raw.counters.get(sid)
            self.stdout.write(f"  {sid}: {_num(a)} -> {_num(b)} ({_change(a, b)})")
        for sid in histograms:
            ha, hb = before.raw.histograms.get(sid), after.raw.histograms.get(sid)
            a = ha.count if ha else None
            b = hb.count if hb else None
            self.stdout.write(f"  {sid} observations: {_num(a)} -> {_num(b)} ({_change(a, b)})")
        if before.raw.epoch != after.raw.epoch:
            self.stdout.write(
                f"  epoch changed ({before.raw.epoch} -> {after.raw.epoch}): the process "
                "restarted, so no rate is derived"
            )


def _is_derived(key: str) -> bool:
    spec = BY_KEY.get(key)
    return spec is not None and spec.kind.derived


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g}"


def _change(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "new" if a is None else "gone"
    return f"{b - a:+.6g}"
