"""The single entry of the scrape package, used by the poller and `manage.py scrape` alike."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import httpx

from . import limits, ray, vllm
from .errors import InvalidUrlError, LimitError, ScrapeError, SourceError
from .fetch import FetchPolicy, check_url, fetch
from .series import RawSnapshot, Sample, make_sample
from .served_models import served_models

KINDS = ("vllm", "ray")
MAX_EXPORTER_THREADS = 8


@dataclass(frozen=True, slots=True)
class PollError:
    """One failure of a poll: a stable `kind` (connect, timeout, parse, ...), a message, and
    which URL or part of the poll it concerns. Never contains the bearer token."""

    kind: str
    message: str
    where: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message, "where": self.where}


@dataclass(frozen=True, slots=True, kw_only=True)
class ScrapeResult:
    """What one poll yields.

    `ok` is False when nothing could be read (then `raw` is None: keep the previous snapshot for
    the next poll). A partial poll (one Ray node down) is ok with errors. `samples` are what to
    store at `ts`; `raw` is what to keep for the next poll's rates; `info` holds non-numeric facts
    (vLLM cache config, pending placement groups with their scheduling state, GPU names).
    """

    kind: str
    source: str
    ts: float
    ok: bool
    samples: list[Sample] = field(default_factory=list)
    raw: RawSnapshot | None = None
    errors: list[PollError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    # Ray: every exporter this poll asked (host:port), answering or not; discovery re-runs
    # on every poll, so this is the cluster's current set of nodes.
    exporters: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "ts": self.ts,
            "ok": self.ok,
            "samples": [s.as_dict() for s in sorted(self.samples, key=lambda s: s.series_id)],
            "errors": [e.as_dict() for e in self.errors],
            "warnings": list(self.warnings),
            "info": self.info,
            "exporters": self.exporters,
            "raw": self.raw.to_json() if self.raw is not None else None,
        }


def unique(samples: list[Sample]) -> list[Sample]:
    """Return samples with one value per series id (the first wins), in order."""
    seen: set[str] = set()
    out = []
    for sample in samples:
        sid = sample.series_id
        if sid not in seen:
            seen.add(sid)
            out.append(sample)
    return out


def _previous(previous: RawSnapshot | Mapping[str, Any] | None) -> RawSnapshot | None:
    if previous is None or isinstance(previous, RawSnapshot):
        return previous
    try:
        return RawSnapshot.from_json(previous)
    except (KeyError, TypeError, ValueError):
        return None  # an unreadable stored snapshot only costs one poll's rates


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")


def from_text(
    text: str,
    kind: str,
    *,
    previous: RawSnapshot | Mapping[str, Any] | None = None,
    ts: float | None = None,
    instance: str = "file",
    source: str = "",
) -> ScrapeResult:
    """Extract a saved payload (vLLM /metrics or one Ray exporter) as a poll would."""
    _check_kind(kind)
    ts = time.time() if ts is None else ts
    prev = _previous(previous)
    try:
        if kind == "vllm":
            extracted = vllm.extract(text, ts)
            samples = [*extracted.gauges, *vllm.derive(prev, extracted.raw)]
            raw, info, warnings = extracted.raw, extracted.info, extracted.warnings
        else:
            merged = ray.merge([ray.extract(text, ts, node=instance)], ts)
            samples = [*merged.gauges, *ray.derive(prev, merged.raw)]
            raw, info, warnings = merged.raw, merged.info, merged.warnings
    except ScrapeError as exc:
        return ScrapeResult(
            kind=kind, source=source, ts=ts, ok=False, errors=[PollError(exc.kind, str(exc))]
        )
    return ScrapeResult(
        kind=kind,
        source=source,
        ts=ts,
        ok=True,
        samples=unique(samples),
        raw=raw,
        warnings=warnings,
        info=info,
    )


def metrics_url(base_url: str) -> str:
    """Return the /metrics URL of a vLLM server given its base URL (or the URL itself)."""
    url = check_url(base_url)
    if url.path.rstrip("/").endswith("/metrics"):
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
    """Poll one target: a vLLM base URL, or a Ray dashboard URL (or one exporter's /metrics).

    Never raises for anything the target does: every failure is a PollError in the result.
    """
    _check_kind(kind)
    policy = (policy or FetchPolicy()).within_budget()
    started = time.monotonic()
    try:
        with limits.applied(policy.limits):
            if kind == "vllm":
                return _scrape_vllm(source, previous, policy, token, clock, client, started)
            return _scrape_ray(source, previous, policy, token, clock, client, started)
    except ScrapeError as exc:
        return ScrapeResult(
            kind=kind,
            source=source,
            ts=clock(),
            ok=False,
            errors=[PollError(exc.kind, str(exc), source)],
        )


def _poll_samples(started: float, payload_bytes: int) -> list[Sample]:
    out = [
        make_sample("scrape.duration_seconds", time.monotonic() - started),
        make_sample("scrape.payload_bytes", float(payload_bytes)),
    ]
    return [s for s in out if s is not None]


def _scrape_vllm(
    source: str,
    previous: RawSnapshot | Mapping[str, Any] | None,
    policy: FetchPolicy,
    token: str | None,
    clock: Callable[[], float],
    client: httpx.Client | None,
    started: float,
) -> ScrapeResult:
    url = metrics_url(source)
    response = fetch(url, policy=policy, token=token, client=client)
    ts = clock()
    result = from_text(response.text(), "vllm", previous=previous, ts=ts, source=source)
    if result.ok:
        result.samples.extend(_poll_samples(started, len(response.body)))
        _read_served_models(url, policy, token, client, result)
    return result


def _read_served_models(
    metrics: str,
    policy: FetchPolicy,
    token: str | None,
    client: httpx.Client | None,
    result: ScrapeResult,
) -> None:
    """Add what /v1/models says to the result's info; its failure only costs a warning."""
    url = metrics.rsplit("/metrics", 1)[0] + "/v1/models"
    try:
        models = served_models(fetch(url, policy=policy, token=token, client=client).body)
    except ScrapeError as exc:
        result.warnings.append(f"/v1/models: {exc}")
        return
    if models:
        result.info["served_models"] = models


def _split_exporter_url(source: str) -> tuple[str, str] | None:
    url = check_url(source)
    if url.path.rstrip("/").endswith("/metrics"):
        return str(url), url.netloc.decode("ascii")
    return None


def _scrape_ray(
    source: str,
    previous: RawSnapshot | Mapping[str, Any] | None,
    policy: FetchPolicy,
    token: str | None,
    clock: Callable[[], float],
    client: httpx.Client | None,
    started: float,
) -> ScrapeResult:
    errors: list[PollError] = []
    info: dict[str, Any] = {}
    extra: list[Sample] = []
    single = _split_exporter_url(source)
    base = str(check_url(source)).rstrip("/")
    if single is not None:
        exporters = [single]
    else:
        exporters = _discover(base, policy, token, client, errors, info)
    exporters = _capped(exporters, policy.limits.max_exporters, errors, source)

    def poll(item: tuple[str, str]) -> tuple[str, ray.Extracted | PollError, int]:
        url, node = item
        try:
            # The token belongs to the dashboard: only send it to an exporter on the same host.
            same_host = check_url(url).host == check_url(base).host
            body = fetch(url, policy=policy, token=token if same_host else None, client=client)
            return node, ray.extract(body.text(), clock(), node=node), len(body.body)
        except ScrapeError as exc:
            return node, PollError(exc.kind, str(exc), url), 0

    parts: list[ray.Extracted] = []
    payload = 0
    if exporters:
        workers = min(MAX_EXPORTER_THREADS, len(exporters))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ray-exporter") as pool:
            # Each exporter is parsed under this poll's limits (a copy of this context each).
            futures = [pool.submit(contextvars.copy_context().run, poll, e) for e in exporters]
            for _node, outcome, size in (f.result() for f in futures):
                if isinstance(outcome, PollError):
                    errors.append(outcome)
                else:
                    parts.append(outcome)
                    payload += size
    ts = clock()
    asked = sorted(node for _url, node in exporters)
    if single is None and parts:
        extra.extend(_dashboard_state(base, policy, token, client, errors, info))
    if not parts:
        if not errors:
            errors.append(PollError("source", "no metrics exporter found", source))
        return ScrapeResult(
            kind="ray", source=source, ts=ts, ok=False, errors=errors, info=info, exporters=asked
        )
    merged = ray.merge(parts, ts)
    prev = _previous(previous)
    samples = [*merged.gauges, *ray.derive(prev, merged.raw), *extra]
    counts = [
        make_sample("ray.cluster.exporters", float(len(exporters))),
        make_sample("ray.cluster.exporters_failed", float(len(exporters) - len(parts))),
    ]
    samples.extend(s for s in counts if s is not None)
    samples.extend(_poll_samples(started, payload))
    info.update(merged.info)
    return ScrapeResult(
        kind="ray",
        source=source,
        ts=ts,
        ok=True,
        samples=unique(samples),
        raw=merged.raw,
        errors=errors,
        warnings=merged.warnings,
        info=info,
        exporters=asked,
    )


def _capped(
    exporters: list[tuple[str, str]], cap: int, errors: list[PollError], source: str
) -> list[tuple[str, str]]:
    """Return at most `cap` exporters (0: no cap), recording how many were left out.

    A dashboard's answer is the target's to write: without a cap, one poll could be made to
    probe hundreds of addresses. Every exporter kept still passes the address guard.
    """
    unique_exporters = list(dict.fromkeys(exporters))
    if not cap or len(unique_exporters) <= cap:
        return unique_exporters
    left_out = len(unique_exporters) - cap
    message = f"{len(unique_exporters)} exporters discovered, {left_out} over the cap of {cap}"
    errors.append(PollError(LimitError.kind, message, source))
    return sorted(unique_exporters, key=lambda e: e[1])[:cap]


def _discover(
    base: str,
    policy: FetchPolicy,
    token: str | None,
    client: httpx.Client | None,
    errors: list[PollError],
    info: dict[str, Any],
) -> list[tuple[str, str]]:
    """Return (exporter URL, node label) pairs from the dashboard (sd first, then nodes)."""
    try:
        body = fetch(f"{base}/api/prometheus/sd", policy=policy, token=token, client=client)
        targets = ray.exporters_from_sd(body.body)
        if targets:
            return [(f"http://{t}/metrics", t) for t in targets]
    except ScrapeError as exc:
        errors.append(PollError(exc.kind, str(exc), f"{base}/api/prometheus/sd"))
    try:
        body = fetch(f"{base}/nodes?view=summary", policy=policy, token=token, client=client)
        nodes = ray.nodes_from_summary(body.body)
    except ScrapeError as exc:
        errors.append(PollError(exc.kind, str(exc), f"{base}/nodes?view=summary"))
        return []
    info["nodes"] = [
        {"node_id": n.node_id, "ip": n.ip, "hostname": n.hostname, "head": n.is_head} for n in nodes
    ]
    out = []
    for n in nodes:
        if n.exporter and n.state in ("ALIVE", ""):
            out.append((f"http://{n.exporter}/metrics", n.exporter))
    return out


def _dashboard_state(
    base: str,
    policy: FetchPolicy,
    token: str | None,
    client: httpx.Client | None,
    errors: list[PollError],
    info: dict[str, Any],
) -> list[Sample]:
    """Read pending placement groups (with reasons) and reservations; failures are recorded."""
    groups: list[ray.PlacementGroupInfo] = []
    url = f"{base}/api/v0/placement_groups?detail=1"
    try:
        groups = ray.placement_groups(fetch(url, policy=policy, token=token, client=client).body)
        info["placement_groups_pending"] = [g.as_dict() for g in groups if g.state == "PENDING"]
    except ScrapeError as exc:
        errors.append(PollError(exc.kind, str(exc), url))
    url = f"{base}/api/cluster_status"
    try:
        body = fetch(url, policy=policy, token=token, client=client).body
        return ray.reservations(body, groups)
    except ScrapeError as exc:
        errors.append(PollError(exc.kind, str(exc), url))
    except (TypeError, ValueError, AttributeError) as exc:
        errors.append(PollError(SourceError.kind, f"unexpected cluster_status: {exc}", url))
    return []


__all__ = [
    "KINDS",
    "InvalidUrlError",
    "PollError",
    "ScrapeResult",
    "from_text",
    "metrics_url",
    "scrape_once",
]
