"""One poll of one target: the scrape package's `scrape_once`, then storage and alerts.

This is the only bridge between the pure scrape package and the database; the Celery task, the
`scrape` command (without storage) and the benchmark all go through `scrape_once` the same way.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx

from core.crypto import SecretUnreadable
from monitoring import conf
from monitoring.models import Target, TargetSnapshot
from monitoring.scrape import ScrapeResult, scrape_once
from monitoring.services import PollOutcome, poll_record_failure, poll_record_success

# Failures worth retrying within the same slot: the network, not the target's answer.
TRANSPORT_ERROR_KINDS = frozenset({"connect", "timeout", "dns", "fetch"})

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


def exporters_of(result: ScrapeResult) -> list[str] | None:
    """Return the Ray exporters a poll saw (answering nodes plus failed exporter URLs)."""
    if result.kind != "ray":
        return None
    nodes = {dict(s.labels)["node"] for s in result.samples if s.key.startswith("ray.node.")}
    failed = {e.where for e in result.errors if e.where.endswith("/metrics")}
    return sorted(nodes | failed)


def scrape_target(target: Target, *, previous: dict | None = None) -> ScrapeResult:
    """Scrape `target` with its token and the configured limits (no storage).

    Raise SecretUnreadable when the saved token cannot be decrypted (keys rotated away).
    """
    token = target.token  # a deferred field is loaded (and decrypted) here
    return scrape_once(
        target.base_url,
        target.kind,
        previous,
        policy=conf.fetch_policy(interval_s=target.poll_interval_s),
        token=token or None,
        client=http_client(),
    )


def poll(
    target: Target, *, slot: int | None = None, record_transport_errors: bool = True
) -> PollReport:
    """Poll `target` once and store the outcome; never raises for what the target does.

    With `record_transport_errors=False` a connect/timeout/DNS failure is returned without being
    stored, so that the caller can retry within the slot before counting a failed poll.
    """
    started = time.monotonic()
    snapshot = TargetSnapshot.objects.filter(target_id=target.pk).values_list("data", flat=True)
    previous = next(iter(snapshot), None)
    try:
        token_ok = True
        result = scrape_target(target, previous=previous)
    except SecretUnreadable as exc:  # the token's key was rotated away: enter it again
        token_ok = False
        result = None
        message = str(exc)
    duration_ms = (time.monotonic() - started) * 1000.0
    if result is None or not result.ok:
        if result is None:
            kind, ts = ("token" if not token_ok else "error"), to_datetime(time.time())
        else:
            first = result.errors[0] if result.errors else None
            kind = first.kind if first else "error"
            message = "; ".join(e.message for e in result.errors[:3]) or "no data"
            ts = to_datetime(result.ts)
        report = PollReport(
            target_id=target.pk,
            ok=False,
            stored=False,
            ts=ts,
            values={},
            error_kind=kind,
            error=message,
        )
        if report.transport_error and not record_transport_errors:
            return report
        stored = poll_record_failure(
            target=target,
            ts=ts,
            error_kind=kind,
            message=message,
            duration_ms=duration_ms,
            slot=slot,
        )
        values = {"poll.up": 0.0, "poll.consecutive_failures": float(target.consecutive_failures)}
        return PollReport(
            target_id=target.pk,
            ok=False,
            stored=stored,
            ts=ts,
            values=values,
            error_kind=kind,
            error=message,
        )
    ts = to_datetime(result.ts)
    info = dict(result.info)
    if result.errors:  # a partial Ray poll: some exporters or dashboard endpoints failed
        info["partial_errors"] = [e.as_dict() for e in result.errors[:20]]
    outcome = PollOutcome(
        samples=result.samples,
        snapshot=result.raw.to_json() if result.raw is not None else None,
        info=info,
        exporters=exporters_of(result),
        warnings=result.warnings,
        duration_ms=duration_ms,
    )
    count = poll_record_success(target=target, ts=ts, outcome=outcome, slot=slot)
    values: dict[str, float] = {}
    for sample in result.samples:
        sid = sample.series_id
        values[sid] = sample.value
        # Rules on a bare key look at the largest value of any label set.
        if sid != sample.key:
            values[sample.key] = max(values.get(sample.key, sample.value), sample.value)
    values.update({"poll.up": 1.0, "poll.consecutive_failures": 0.0})
    return PollReport(
        target_id=target.pk, ok=True, stored=count > 0, ts=ts, values=values, samples=count
    )
