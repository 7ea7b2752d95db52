"""Value objects that cross the series-store interface (no Django: any backend, any caller).

Times are aware datetimes on the way in; points come back as unix milliseconds (range reads, for
charts) or datetimes (window reads, for evidence and plan vs reality, which join series on equal
timestamps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from monitoring.scrape.series import Labels, freeze_labels, series_id

Points = list[tuple[datetime, float]]


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetRef:
    """What a store needs to know of a target.

    `selector` is set for a read-only target: a PromQL selector (`{job="vllm",instance="a:8000"}`)
    whose series an existing Prometheus already scrapes; ServePlan polls nothing for it.
    """

    id: int
    name: str
    kind: str
    interval_s: int
    selector: str = ""
    last_success_at: datetime | None = None
    # When the target's newest poll was stored (None: never polled); the version of its series.
    last_poll_at: datetime | None = None

    @property
    def read_only(self) -> bool:
        return bool(self.selector)


@dataclass(frozen=True, slots=True)
class SeriesMatch:
    """A series key, with one canonical label set (`{a="1"}`, "" for none) or None for all."""

    key: str
    labels: str | None = None


@dataclass(frozen=True, slots=True)
class WriteSample:
    key: str
    labels: Labels
    value: float


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteBatch:
    """Every sample of one poll of one target, all at the poll's time."""

    target: TargetRef
    ts: datetime
    samples: tuple[WriteSample, ...]

    def __len__(self) -> int:
        return len(self.samples)


@dataclass(frozen=True, slots=True, kw_only=True)
class SeriesPoints:
    """One series over a range: bucket times (ms, mid-bucket) and values (None: a gap)."""

    target_id: int | None  # None: a fleet-wide sum
    key: str
    labels: Labels
    times_ms: tuple[int, ...]
    values: tuple[float | None, ...]

    @property
    def id(self) -> str:
        return series_id(self.key, self.labels)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target_id,
            "key": self.key,
            "labels": dict(self.labels),
            "id": self.id,
            "t": list(self.times_ms),
            "v": list(self.values),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SeriesPoints:
        return cls(
            target_id=data["target"],
            key=data["key"],
            labels=freeze_labels(data.get("labels") or {}),
            times_ms=tuple(data["t"]),
            values=tuple(data["v"]),
        )


class Source:
    """Where a range read came from (the API's `source`)."""

    RAW = "raw"
    ROLLUP = "rollup"
    PROMETHEUS = "prometheus"


@dataclass(frozen=True, slots=True, kw_only=True)
class RangeResult:
    """Series between `start_ms` and `end_ms`, downsampled to buckets of `bucket_s` seconds."""

    start_ms: int
    end_ms: int
    bucket_s: float
    source: str
    series: tuple[SeriesPoints, ...] = ()
    # Targets whose store could not answer (their series are missing, the others are here).
    unavailable: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The series API's answer (monitoring.api: SeriesResponseSerializer)."""
        return {
            "start": self.start_ms,
            "end": self.end_ms,
            "bucket_s": self.bucket_s,
            "source": self.source,
            "series": [s.to_json() for s in self.series],
            **({"unavailable": list(self.unavailable)} if self.unavailable else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RangeResult:
        return cls(
            start_ms=data["start"],
            end_ms=data["end"],
            bucket_s=float(data.get("bucket_s", 1.0)),
            source=data["source"],
            series=tuple(SeriesPoints.from_json(s) for s in data["series"]),
            unavailable=tuple(data.get("unavailable", ())),
        )


@dataclass(frozen=True, slots=True)
class LatestValue:
    """A series' value at the target's last successful poll."""

    key: str
    labels: Labels
    value: float

    @property
    def labels_dict(self) -> dict[str, str]:
        return dict(self.labels)


class StoreUnavailable(Exception):
    """The series store could not answer a read (its server is down or refused the query)."""


class Forgotten(StrEnum):
    """What became of a deleted target's series in the store."""

    DELETED = "deleted"
    NOT_OURS = "not_ours"  # a read-only target: the series belong to the Prometheus scraping it
    KEPT = "kept"  # the server did not delete them (e.g. its admin API is off)


@dataclass(frozen=True, slots=True, kw_only=True)
class ForgetReport:
    outcome: Forgotten
    selector: str = ""  # the series, as a PromQL selector, for deleting them by hand
    reason: str = ""
    # Delete them once more this long after the target's deletion: a write already under way
    # may still reach the server (None: nothing can arrive late, e.g. rows deleted with it).
    again_after_s: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteReport:
    """What a store did with the batches handed to it so far (remote write: see buffer)."""

    written: int = 0  # samples the server accepted
    pending: int = 0  # samples waiting for the server
    dropped: int = 0  # samples lost (buffer full, or refused by the server)
    target_deleted: int = 0  # samples not sent: their target was deleted first (not lost)
    errors: Sequence[str] = field(default_factory=tuple)
