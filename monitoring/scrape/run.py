"""The single entry of the scrape package, used by the poller and `manage.py scrape` alike.

Both entries look the target kind up in `kinds.REGISTRY`; no kind is named here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from . import kinds, limits
from .errors import InvalidUrlError, ScrapeError
from .fetch import FetchPolicy, check_url, fetch, is_metrics_endpoint
from .keys import BY_KEY
from .result import PollError, ScrapeResult, poll_samples, previous_snapshot, unique
from .series import RawSnapshot, Sample

KINDS = kinds.KINDS


def known(samples: list[Sample], warnings: list[str]) -> list[Sample]:
    """Return the samples whose key is in the key table; warn once about any other key.

    The table in keys.py is what dashboards, alerts and the API rely on: a key outside it
    would be stored but shown nowhere, so it is never stored.
    """
    out = [s for s in samples if s.key in BY_KEY]
    unknown = sorted({s.key for s in samples if s.key not in BY_KEY})
    if unknown:
        warnings.append(f"keys outside the key table not stored: {', '.join(unknown[:5])}")
    return out


def from_text(
    text: str,
    kind: str,
    *,
    previous: RawSnapshot | Mapping[str, Any] | None = None,
    ts: float | None = None,
    instance: str = "file",
    source: str = "",
) -> ScrapeResult:
    """Extract a saved payload (vLLM, one Ray exporter, one GPU exporter) as a poll would."""
    spec = kinds.get(kind)
    ts = time.time() if ts is None else ts
    prev = previous_snapshot(previous)
    try:
        extracted = spec.read(text, ts, instance)
        samples = [*extracted.gauges, *spec.derive(prev, extracted.raw)]
    except ScrapeError as exc:
        return ScrapeResult(
            kind=kind, source=source, ts=ts, ok=False, errors=[PollError(exc.kind, str(exc))]
        )
    warnings = list(extracted.warnings)
    return ScrapeResult(
        kind=kind,
        source=source,
        ts=ts,
        ok=True,
        samples=known(unique(samples), warnings),
        raw=extracted.raw if spec.rates else None,
        warnings=warnings,
        info=extracted.info,
    )


def metrics_url(base_url: str) -> str:
    """Return the /metrics URL of a target given its base URL (or the URL itself)."""
    url = check_url(base_url)
    if is_metrics_endpoint(url):
        return str(url)
    return str(url.copy_with(path=url.path.rstrip("/") + "/metrics"))


def scrape_once(
    source: str,
    kind: str,
    previous: RawSnapshot | Mapping[str, Any] | None = None,
    *,
    policy: FetchPolicy | None = None,
    token: str | None = None,
    clock: Callable[[], float] = time.time,
    client: httpx.Client | None = None,
) -> ScrapeResult:
    """Poll one target: a vLLM or GPU exporter base URL, or a Ray dashboard (or one exporter).

    Never raises for anything the target does: every failure is a PollError in the result.
    """
    spec = kinds.get(kind)
    policy = (policy or FetchPolicy()).within_budget()
    started = time.monotonic()
    try:
        with limits.applied(policy.limits):
            if spec.poll is not None:
                result = spec.poll(source, previous, policy, token, clock, client, started)
            else:
                result = _scrape_payload(
                    spec, source, previous, policy, token, clock, client, started
                )
    except ScrapeError as exc:
        return ScrapeResult(
            kind=kind,
            source=source,
            ts=clock(),
            ok=False,
            errors=[PollError(exc.kind, str(exc), source)],
        )
    if result.ok:
        result.samples[:] = known(result.samples, result.warnings)
    return result


def _scrape_payload(
    spec: kinds.ScrapeKind,
    source: str,
    previous: RawSnapshot | Mapping[str, Any] | None,
    policy: FetchPolicy,
    token: str | None,
    clock: Callable[[], float],
    client: httpx.Client | None,
    started: float,
) -> ScrapeResult:
    """Poll a target that is one `/metrics` payload (vLLM server, GPU exporter)."""
    url = metrics_url(source)
    response = fetch(url, policy=policy, token=token, client=client)
    ts = clock()
    result = from_text(response.text(), spec.name, previous=previous, ts=ts, source=source)
    if result.ok:
        result.samples.extend(poll_samples(started, len(response.body)))
        if spec.after_payload is not None:
            spec.after_payload(url, policy, token, client, result)
    return result


__all__ = [
    "KINDS",
    "InvalidUrlError",
    "PollError",
    "ScrapeResult",
    "from_text",
    "metrics_url",
    "scrape_once",
]
