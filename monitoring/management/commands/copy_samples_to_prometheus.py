"""Copy the embedded store's samples to a Prometheus-compatible server through remote write."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.dateparse import parse_datetime

from monitoring.series.buffer import RetryBuffer
from monitoring.stores import prometheus_urls
from monitoring.stores.copy import CopyReport, CopyStopped, copy_samples
from monitoring.stores.prometheus import PrometheusStore


class Command(BaseCommand):
    help = (
        "Copy every sample of ServePlan's own database (raw samples, and one-minute rollups "
        "older than them) and the fleet's sums (the scheduler's ticks, and minute averages "
        "older than them) to the Prometheus-compatible server of MONITORING_PROMETHEUS_URL "
        "through remote write, oldest first. Run it once when switching "
        "MONITORING_SERIES_STORE to prometheus; the server must accept old samples "
        "(Prometheus: storage.tsdb.out_of_order_time_window in its configuration file)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="", help="remote write URL (default: the settings')")
        parser.add_argument(
            "--since", default="", help="copy samples from this time on (ISO 8601 with offset)"
        )
        parser.add_argument(
            "--no-rollups",
            action="store_true",
            help="copy raw samples and fleet ticks only (no minute averages)",
        )
        parser.add_argument("--request-samples", type=int, default=5000)

    def handle(self, *args: Any, **options: Any) -> None:
        since = None
        if options["since"]:
            since = parse_datetime(options["since"])
            if since is None or since.tzinfo is None:
                raise CommandError(
                    "--since: not a time with its UTC offset, e.g. 2026-12-01T00:00Z"
                )
        if options["request_samples"] < 1:
            raise CommandError("--request-samples: at least 1")
        try:
            query_url, write_url = prometheus_urls(
                settings.MONITORING_PROMETHEUS_URL,
                options["url"] or settings.MONITORING_REMOTE_WRITE_URL,
            )
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from None
        server = PrometheusStore(
            query_url=query_url, write_url=write_url, buffer=RetryBuffer(max_samples=1)
        )

        def progress(report: CopyReport) -> None:
            if report.requests % 100 == 0 and report.last is not None:
                self.stdout.write(f"{_copied(report)} sent, up to {report.last.isoformat()}")

        try:
            report = copy_samples(
                server,
                since=since,
                rollups=not options["no_rollups"],
                request_samples=options["request_samples"],
                progress=progress,
            )
        except CopyStopped as exc:
            done = exc.report
            resume = f" (resume with --since {done.last.isoformat()})" if done.last else ""
            raise CommandError(f"stopped after {_copied(done)}: {exc}{resume}") from None
        self.stdout.write(f"copied {_copied(report)} in {report.requests} requests to {write_url}")


def _copied(report: CopyReport) -> str:
    return f"{report.samples} samples and {report.fleet_sums} fleet sums"
