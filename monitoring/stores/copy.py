"""A one-off copy of the embedded store's samples to a Prometheus-compatible server, through
remote write: what an operator runs once when switching MONITORING_SERIES_STORE to prometheus.

Rollups are copied for the minutes older than the oldest raw sample (one point a minute, the
minute's average), then every raw sample, oldest first, so each series arrives in time order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from monitoring import stores
from monitoring.models import Rollup, Sample, Target
from monitoring.scrape.series import freeze_labels, parse_series_id
from monitoring.series import WriteBatch, WriteSample
from monitoring.series.buffer import RetryLater
from monitoring.stores.prometheus import PrometheusStore

RETRIES = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyReport:
    samples: int
    requests: int
    last: datetime | None  # the newest time copied: --since resumes from there


class CopyStopped(Exception):
    def __init__(self, message: str, report: CopyReport) -> None:
        super().__init__(message)
        self.report = report


Row = tuple[int, str, str, datetime, float]


def _labels(canonical: str):
    return freeze_labels(parse_series_id("x" + canonical)[1]) if canonical else ()


def _rows(since: datetime | None, rollups: bool) -> Iterator[Row]:
    raw = Sample.objects.order_by("ts")
    if since is not None:
        raw = raw.filter(ts__gte=since)
    oldest = raw.values_list("ts", flat=True).first()
    if rollups:
        minutes = Rollup.objects.order_by("minute")
        if since is not None:
            minutes = minutes.filter(minute__gte=since)
        if oldest is not None:
            minutes = minutes.filter(minute__lt=oldest)
        yield from minutes.values_list("target_id", "series", "labels", "minute", "avg").iterator(
            chunk_size=5000
        )
    yield from raw.values_list("target_id", "series", "labels", "ts", "value").iterator(
        chunk_size=5000
    )


def _batches(rows: Iterator[Row]) -> Iterator[WriteBatch]:
    """Group rows of one target at one time into a batch (a poll, as the poller wrote it)."""
    refs = {t.id: t for t in stores.refs(Target.objects.all())}
    current: tuple[int, datetime] | None = None
    samples: list[WriteSample] = []
    for target_id, key, labels, ts, value in rows:
        if current != (target_id, ts):
            if current is not None and samples:
                yield WriteBatch(target=refs[current[0]], ts=current[1], samples=tuple(samples))
            current, samples = (target_id, ts), []
        samples.append(WriteSample(key, _labels(labels), value))
    if current is not None and samples:
        yield WriteBatch(target=refs[current[0]], ts=current[1], samples=tuple(samples))


def copy_samples(
    server: PrometheusStore,
    *,
    since: datetime | None = None,
    rollups: bool = True,
    request_samples: int = 5000,
    progress: Callable[[CopyReport], None] | None = None,
) -> CopyReport:
    """Send every stored sample (since `since`) to `server`; raise CopyStopped, saying how far
    it got, when the server keeps refusing or stays down."""
    report = CopyReport(samples=0, requests=0, last=None)
    chunk: list[WriteBatch] = []

    def send() -> None:
        nonlocal report
        for attempt in range(RETRIES):
            try:
                server.send(chunk)
                break
            except RetryLater as exc:
                if attempt == RETRIES - 1:
                    raise CopyStopped(f"the server stayed unavailable: {exc}", report) from None
                time.sleep(2**attempt)
            except Exception as exc:  # Refused: the server will not take these samples
                raise CopyStopped(f"the server refused samples: {exc}", report) from None
        report = CopyReport(
            samples=report.samples + sum(len(b) for b in chunk),
            requests=report.requests + 1,
            last=chunk[-1].ts,
        )
        chunk.clear()
        if progress is not None:
            progress(report)

    for batch in _batches(_rows(since, rollups)):
        chunk.append(batch)
        if sum(len(b) for b in chunk) >= request_samples:
            send()
    if chunk:
        send()
    return report
