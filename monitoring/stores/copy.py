"""A one-off copy of the embedded store's samples to a Prometheus-compatible server, through
remote write: what an operator runs once when switching MONITORING_SERIES_STORE to prometheus.

Rollups are copied for the minutes that ended by the oldest raw sample (one point a minute, the
minute's average), then every raw sample, oldest first, so each series arrives in time order.
The minute the oldest raw sample falls in is left out: its raw samples cover it (as for the
fleet's minutes below), and its average would count the part they cover twice.

The fleet's sums (FleetSum rows) go as the series the Prometheus store's scheduler tick writes
(target `rw.FLEET`), so that the overview's fleet charts read them for the past as they will
for the future: the tick rows, and the minute rows only for the minutes whose ticks retention
has already deleted (a minute ending after the oldest tick is left out: its ticks cover it).
Both streams are merged in time order, so one `--since` (the newest time sent) resumes both.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from monitoring import fleet, stores
from monitoring.models import FleetSum, Rollup, Sample, Target
from monitoring.scrape.series import freeze_labels, parse_series_id
from monitoring.series import WriteBatch, WriteSample
from monitoring.series import remote_write as rw
from monitoring.series.buffer import LeftOut, RetryLater
from monitoring.stores.embedded.retention import MINUTE
from monitoring.stores.prometheus import PrometheusStore

RETRIES = 5
CHUNK_ROWS = 5000


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyReport:
    samples: int  # the targets' samples (raw, and rollups)
    requests: int
    last: datetime | None  # the newest time copied: --since resumes from there
    fleet_sums: int = 0  # FleetSum rows (ticks, and minutes older than them), one time each


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
        if oldest is not None:  # each minute that ended by then (a Rollup's `minute` starts it)
            minutes = minutes.filter(minute__lte=oldest - MINUTE)
        yield from minutes.values_list("target_id", "series", "labels", "minute", "avg").iterator(
            chunk_size=CHUNK_ROWS
        )
    yield from raw.values_list("target_id", "series", "labels", "ts", "value").iterator(
        chunk_size=CHUNK_ROWS
    )


def _fleet_rows(since: datetime | None, minutes: bool) -> Iterator[tuple[datetime, dict]]:
    """The fleet's sums, oldest first: the minute rows of the minutes that ended before the
    oldest tick (since `since`), then every tick."""
    ticks = FleetSum.objects.filter(step_s=fleet.TICK_STEP_S).order_by("ts")
    if since is not None:
        ticks = ticks.filter(ts__gte=since)
    oldest = ticks.values_list("ts", flat=True).first()
    if minutes:
        rows = FleetSum.objects.filter(step_s=fleet.MINUTE_STEP_S).order_by("ts")
        if since is not None:
            rows = rows.filter(ts__gte=since)
        if oldest is not None:
            rows = rows.filter(ts__lte=oldest - timedelta(seconds=fleet.MINUTE_STEP_S))
        yield from rows.values_list("ts", "values").iterator(chunk_size=CHUNK_ROWS)
    yield from ticks.values_list("ts", "values").iterator(chunk_size=CHUNK_ROWS)


def _fleet_batches(rows: Iterator[tuple[datetime, dict]]) -> Iterator[WriteBatch]:
    for ts, values in rows:
        samples = tuple(
            WriteSample(key, (), float(value)) for key, value in sorted((values or {}).items())
        )
        if samples:
            yield WriteBatch(target=rw.FLEET, ts=ts, samples=samples)


def _is_fleet(batch: WriteBatch) -> bool:
    return batch.target.id == rw.FLEET.id


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
    """Send every stored sample and fleet sum (since `since`) to `server`, in time order; raise
    CopyStopped, saying how far it got, when the server keeps refusing or stays down."""
    report = CopyReport(samples=0, requests=0, last=None)
    chunk: list[WriteBatch] = []

    def send() -> None:
        nonlocal report
        left_out = LeftOut()
        for attempt in range(RETRIES):
            try:
                left_out = server.send(chunk) or left_out
                break
            except RetryLater as exc:
                if attempt == RETRIES - 1:
                    raise CopyStopped(f"the server stayed unavailable: {exc}", report) from None
                time.sleep(2**attempt)
            except Exception as exc:  # Refused: the server will not take these samples
                raise CopyStopped(f"the server refused samples: {exc}", report) from None
        report = CopyReport(
            samples=report.samples
            + sum(len(b) for b in chunk if not _is_fleet(b))
            - left_out.target_deleted,  # a target deleted meanwhile
            fleet_sums=report.fleet_sums + sum(1 for b in chunk if _is_fleet(b)),
            requests=report.requests + 1,
            last=chunk[-1].ts,
        )
        chunk.clear()
        if progress is not None:
            progress(report)

    # Each stream reads through a server-side cursor on PostgreSQL: a copy that stops closes
    # them at once, not whenever the garbage collector finalizes the generators (which can be
    # in the middle of another query of the same connection).
    streams = [_rows(since, rollups), _fleet_rows(since, rollups)]
    try:
        for batch in heapq.merge(
            _batches(streams[0]), _fleet_batches(streams[1]), key=lambda b: b.ts
        ):
            chunk.append(batch)
            if sum(len(b) for b in chunk) >= request_samples:
                send()
        if chunk:
            send()
    finally:
        for stream in streams:
            stream.close()
    return report
