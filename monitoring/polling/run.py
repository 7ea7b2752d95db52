"""One poll of one target: the scrape package's `scrape_once`, then storage and alerts.

This is the only bridge between the pure scrape package and the database; the Celery task, the
`scrape` command (without storage) and the benchmark all go through `scrape_once` the same way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import httpx
from django.db import transaction

from core.crypto import SecretUnreadable
from monitoring import conf, pacing, stores
from monitoring.models import Target, TargetSnapshot, job_refusal
from monitoring.polling.record import PollOutcome, poll_record_failure, poll_record_success
from monitoring.scrape import ScrapeResult, kinds, scrape_once
from monitoring.scrape.series import Sample, make_sample
from monitoring.series import LatestValue, StoreUnavailable
from monitoring.series.readonly import kinds as readonly_kinds
from monitoring.targets import kinds as web_kinds

# Failures worth retrying within the same slot: quick network ones, not the target's answer. A
# timeout is not retried: it already spent the poll's whole time budget (monitoring.pacing).
TRANSPORT_ERROR_KINDS = frozenset({"connect", "dns", "fetch"})

_local = threading.local()


def http_client() -> httpx.Client:
    """Return this thread's pooled HTTP client (keep-alive across polls of the same worker)."""
    client = getattr(_local, "client", None)
    if client is None:
        client = httpx.Client(follow_redirects=False, trust_env=False, verify=True)
        _local.client = client
    return client


@dataclass(frozen=True, slots=True, kw_only=True)
class PollReport:
    target_id: int
    ok: bool
    stored: bool
    ts: datetime
    values: dict[str, float]
    error_kind: str = ""
    error: str = ""
    samples: int = 0
    duration_ms: float = 0.0

    @property
    def transport_error(self) -> bool:
        return not self.ok and self.error_kind in TRANSPORT_ERROR_KINDS


def to_datetime(ts: float) -> datetime:
    """Return the unix time `ts` as an aware datetime rounded to the millisecond."""
    return datetime.fromtimestamp(round(ts, 3), tz=UTC)


def _unstored(
    target: Target, ts: datetime, duration_ms: float, *, error_kind: str = "", error: str = ""
) -> PollReport:
    """The report of a poll before storage: ok unless it names an error kind."""
    return PollReport(
        target_id=target.pk,
        ok=not error_kind,
        stored=False,
        ts=ts,
        values={},
        error_kind=error_kind,
        error=error,
        duration_ms=duration_ms,
    )


def _store_success(
    target: Target,
    report: PollReport,
    outcome: PollOutcome,
    *,
    slot: int | None,
    on_stored: OnStored | None,
) -> PollReport:
    """Store a successful poll and run `on_stored` (alerts) in one transaction: one commit."""
    values = {
        **values_of(outcome.samples),
        "poll.up": 1.0,
        "poll.consecutive_failures": 0.0,
        OVERDUE_SERIES: 0.0,
    }
    with transaction.atomic():
        count = poll_record_success(target=target, ts=report.ts, outcome=outcome, slot=slot)
        report = replace(report, stored=count > 0, values=values, samples=count)
        if report.stored and on_stored is not None:
            on_stored(report)
    return report


def scrape_target(target: Target, *, previous: dict | None = None) -> ScrapeResult:
    """Scrape `target` with its token and the configured limits (no storage).

    Raise SecretUnreadable when the saved token cannot be decrypted (keys rotated away).
    """
    token = target.token  # a deferred field is loaded (and decrypted) here
    return scrape_once(
        target.base_url,
        target.kind,
        previous,
        policy=conf.fetch_policy(
            interval_s=target.poll_interval_s, sample_limit=target.sample_limit
        ),
        token=token or None,
        client=http_client(),
    )


OnStored = Callable[["PollReport"], None]
# Poll intervals a target is overdue by (0 at every poll): the scheduler raises it for targets
# whose polls stopped coming (starved, expired), the fleet-wide "polls stopped" rule watches it.
OVERDUE_SERIES = "poll.overdue_intervals"


def previous_snapshot(target: Target, *, now: datetime | None = None) -> dict | None:
    """Return the raw snapshot to compute rates against, or None after a gap.

    Counters read across missed polls would give a rate averaged over the whole gap (a
    4-minute outage drawn as a flat average): after a gap the poll stores gauges only, and
    rates resume at the next poll. A kind without rates keeps no snapshot: nothing to read.
    """
    if not kinds.get(target.kind).rates:
        return None
    row = TargetSnapshot.objects.filter(target_id=target.pk).values_list("data", "taken_at").first()
    if row is None:
        return None
    data, taken_at = row
    gap_s = ((now or datetime.now(tz=UTC)) - taken_at).total_seconds()
    if pacing.missed_polls(gap_s, target.poll_interval_s, target.spacing_factor):
        return None
    return data


def poll(
    target: Target,
    *,
    slot: int | None = None,
    record_transport_errors: bool = True,
    on_stored: OnStored | None = None,
) -> PollReport:
    """Poll `target` once and store the outcome; never raises for what the target does.

    The fetch runs outside any transaction; the storage and `on_stored` (alert evaluation) run
    in one transaction, so a poll costs one commit. With `record_transport_errors=False` a
    connect/timeout/DNS failure is returned unstored, for the caller to retry within its slot.
    """
    if target.read_only:
        return read_from_prometheus(target, slot=slot, on_stored=on_stored)
    started = time.monotonic()
    previous = previous_snapshot(target)
    try:
        result: ScrapeResult | None = scrape_target(target, previous=previous)
        message = ""
    except SecretUnreadable as exc:  # the token's key was rotated away: enter it again
        result = None
        message = str(exc)
    duration_ms = (time.monotonic() - started) * 1000.0
    if result is None or not result.ok:
        if result is None:
            kind, ts = "token", to_datetime(time.time())
        else:
            first = result.errors[0] if result.errors else None
            kind = first.kind if first else "error"
            message = "; ".join(e.message for e in result.errors[:3]) or "no data"
            ts = to_datetime(result.ts)
        report = _unstored(target, ts, duration_ms, error_kind=kind, error=message)
        if report.transport_error and not record_transport_errors:
            return report
        return record_failure(target, report, slot=slot, on_stored=on_stored)
    ts = to_datetime(result.ts)
    info = dict(result.info)
    extras = web_kinds.get(target.kind).extra_samples(target, result.samples, info)
    if extras:
        result.samples.extend(extras)
    if result.errors:  # a partial Ray poll: some exporters or dashboard endpoints failed
        info["partial_errors"] = [e.as_dict() for e in result.errors[:20]]
    outcome = PollOutcome(
        samples=result.samples,
        snapshot=result.raw.to_json() if result.raw is not None else None,
        info=info,
        exporters=result.exporters if kinds.get(result.kind).discovers_exporters else None,
        warnings=result.warnings,
        duration_ms=duration_ms,
    )
    report = _unstored(target, ts, duration_ms)
    return _store_success(target, report, outcome, slot=slot, on_stored=on_stored)


def values_of(samples: list[Sample]) -> dict[str, float]:
    """Each sample's value by series id, and by bare key the largest value of any label set
    (what rules on a bare key look at)."""
    values: dict[str, float] = {}
    for sample in samples:
        sid = sample.series_id
        values[sid] = sample.value
        if sid != sample.key:
            values[sample.key] = max(values.get(sample.key, sample.value), sample.value)
    return values


def read_from_prometheus(
    target: Target, *, slot: int | None = None, on_stored: OnStored | None = None
) -> PollReport:
    """A read-only target's "poll": its current values from Prometheus (no request to the
    server itself), stored on the target like a poll's, then `on_stored` (alerts).

    Up when Prometheus' last scrape of it succeeded (`up` = 1); down when the scrape failed or
    Prometheus has no series for the selector; a Prometheus that does not answer is an error of
    kind "store".
    """
    started = time.monotonic()
    ts = to_datetime(time.time())
    wanted = readonly_kinds.of_kind(target.kind)
    refused = job_refusal(target.selector)
    if refused:  # an admin withdrew the job since: nothing of it is read
        rows, facts, kind, message = [], {}, "forbidden_selector", refused
    else:
        rows, facts, kind, message = _read_values(target, wanted.keys)
    duration_ms = (time.monotonic() - started) * 1000.0
    report = _unstored(target, ts, duration_ms, error_kind=kind, error=message)
    if kind:
        return record_failure(target, report, slot=slot, on_stored=on_stored)
    made = (make_sample(r.key, r.value, r.labels_dict) for r in rows if r.key != "poll.up")
    samples = [s for s in made if s is not None]
    info = {**facts, **(wanted.info(samples) if wanted.info else {})}
    samples.extend(web_kinds.get(target.kind).extra_samples(target, samples, info))
    outcome = PollOutcome(samples=samples, info=info, duration_ms=duration_ms)
    return _store_success(target, report, outcome, slot=slot, on_stored=on_stored)


def _read_values(
    target: Target, keys: Sequence[str]
) -> tuple[list[LatestValue], dict[str, Any], str, str]:
    """Return a read-only target's current rows and facts, and the error (kind, message)."""
    try:
        reader, ref = stores.read_only(), stores.ref(target)
        rows, facts = reader.values(ref, keys), reader.facts(ref)
    except StoreUnavailable as exc:
        return [], {}, "store", str(exc)
    if not any(r.key == "poll.up" and r.value == 1.0 for r in rows):
        return rows, facts, "scrape", "Prometheus has no successful scrape of this selector"
    return rows, facts, "", ""


def record_failure(
    target: Target,
    report: PollReport,
    *,
    slot: int | None = None,
    on_stored: OnStored | None = None,
) -> PollReport:
    """Store a failed poll's error on the target (earlier samples stay), then `on_stored`."""
    with transaction.atomic():
        stored = poll_record_failure(
            target=target,
            ts=report.ts,
            error_kind=report.error_kind,
            message=report.error,
            duration_ms=report.duration_ms,
            slot=slot,
        )
        values = {
            "poll.up": 0.0,
            "poll.consecutive_failures": float(target.consecutive_failures),
            OVERDUE_SERIES: 0.0,  # a poll ran: the "polls stopped" alert resolves
        }
        report = replace(report, stored=stored, values=values)
        if stored and on_stored is not None:
            on_stored(report)
    return report
