"""What one poll yields (ScrapeResult, PollError) and the helpers every kind's poll shares."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .series import RawSnapshot, Sample, make_sample


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


def previous_snapshot(previous: RawSnapshot | Mapping[str, Any] | None) -> RawSnapshot | None:
    if previous is None or isinstance(previous, RawSnapshot):
        return previous
    try:
        return RawSnapshot.from_json(previous)
    except (KeyError, TypeError, ValueError):
        return None  # an unreadable stored snapshot only costs one poll's rates


def poll_samples(started: float, payload_bytes: int) -> list[Sample]:
    out = [
        make_sample("scrape.duration_seconds", time.monotonic() - started),
        make_sample("scrape.payload_bytes", float(payload_bytes)),
    ]
    return [s for s in out if s is not None]
