"""Value objects of the scrape package: stored samples and the raw snapshot kept between polls."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Labels = tuple[tuple[str, str], ...]


def freeze_labels(labels: Mapping[str, str] | Labels | None) -> Labels:
    """Return labels as a sorted tuple of pairs (hashable, order-independent)."""
    if not labels:
        return ()
    items = labels.items() if isinstance(labels, Mapping) else labels
    return tuple(sorted((str(k), str(v)) for k, v in items))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def series_id(key: str, labels: Mapping[str, str] | Labels | None = None) -> str:
    """Return the canonical string of a series: `key` or `key{a="1",b="x"}` (labels sorted)."""
    frozen = freeze_labels(labels)
    if not frozen:
        return key
    inner = ",".join(f'{name}="{_escape(value)}"' for name, value in frozen)
    return f"{key}{{{inner}}}"


_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def parse_series_id(text: str) -> tuple[str, dict[str, str]]:
    """Split a canonical series string back into its key and labels.

    Raise ValueError (never another error) when `text` is not `key` or
    `key{name="value",...}` with quoted, backslash-escaped values.
    """
    brace = text.find("{")
    if brace < 0:
        return text, {}
    if not text.endswith("}"):
        raise ValueError(f"not a series id: {text!r}")
    key, body = text[:brace], text[brace + 1 : -1]
    labels: dict[str, str] = {}
    i = 0
    while i < len(body):
        name = _LABEL_NAME.match(body, i)
        if name is None or body[name.end() : name.end() + 2] != '="':
            raise ValueError(f"not a series id: {text!r}")
        value, i = _quoted(body, name.end() + 2, text)
        labels[name.group()] = value
        if i < len(body) and body[i] != ",":
            raise ValueError(f"not a series id: {text!r}")
        i += 1  # the comma
    return key, labels


def _quoted(body: str, j: int, text: str) -> tuple[str, int]:
    """Read a quoted value's characters from `j` (after the opening quote) to its closing
    quote; return the value and the index after that quote."""
    chars: list[str] = []
    while j < len(body) and body[j] != '"':
        if body[j] == "\\":
            j += 1
            if j == len(body):
                break
            chars.append("\n" if body[j] == "n" else body[j])
        else:
            chars.append(body[j])
        j += 1
    if j >= len(body):
        raise ValueError(f"not a series id: {text!r}")
    return "".join(chars), j + 1


@dataclass(frozen=True, slots=True)
class Sample:
    """One value to store: a series key from SERIES, its labels, and a finite float."""

    key: str
    labels: Labels
    value: float

    @property
    def series_id(self) -> str:
        return series_id(self.key, self.labels)

    @property
    def labels_dict(self) -> dict[str, str]:
        return dict(self.labels)

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "labels": dict(self.labels), "value": self.value}


def make_sample(key: str, value: float, labels: Mapping[str, str] | None = None) -> Sample | None:
    """Return a Sample, or None when the value is NaN or infinite (never stored)."""
    if not math.isfinite(value):
        return None
    return Sample(key=key, labels=freeze_labels(labels), value=float(value))


@dataclass(frozen=True, slots=True)
class Histogram:
    """Cumulative histogram state: (upper bound, cumulative count) pairs sorted by bound."""

    buckets: tuple[tuple[float, float], ...]
    count: float
    sum: float

    def to_json(self) -> dict[str, Any]:
        return {
            "buckets": [[_float_json(le), c] for le, c in self.buckets],
            "count": self.count,
            "sum": self.sum,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Histogram:
        return cls(
            buckets=tuple((_float_from_json(le), float(c)) for le, c in data["buckets"]),
            count=float(data["count"]),
            sum=float(data["sum"]),
        )


def merge_histograms(parts: Iterable[Histogram]) -> Histogram:
    """Sum histograms bucket by bucket (e.g. across vLLM engines); bounds are unioned."""
    by_le: dict[float, float] = {}
    count = 0.0
    total = 0.0
    for part in parts:
        for le, cum in part.buckets:
            by_le[le] = by_le.get(le, 0.0) + cum
        count += part.count
        total += part.sum
    return Histogram(buckets=tuple(sorted(by_le.items())), count=count, sum=total)


def _float_json(value: float) -> float | str:
    return value if math.isfinite(value) else ("+Inf" if value > 0 else "-Inf")


def _float_from_json(value: float | str) -> float:
    return float(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class RawSnapshot:
    """What one poll keeps for the next: cumulative counters and histograms, by series id.

    `epoch` identifies the process or cluster lifetime (vLLM process start time, Ray SessionName):
    when it changes, every counter has been reset and no rate is computed for the pair.
    """

    kind: str
    ts: float
    epoch: str | None = None
    counters: dict[str, float] = field(default_factory=dict)
    histograms: dict[str, Histogram] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "ts": self.ts,
            "epoch": self.epoch,
            "counters": dict(self.counters),
            "histograms": {k: h.to_json() for k, h in self.histograms.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RawSnapshot:
        return cls(
            kind=str(data["kind"]),
            ts=float(data["ts"]),
            epoch=data.get("epoch"),
            counters={str(k): float(v) for k, v in data.get("counters", {}).items()},
            histograms={
                str(k): Histogram.from_json(v) for k, v in data.get("histograms", {}).items()
            },
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Extracted:
    """What one payload holds: gauges to store as is, the raw snapshot kept for rates, facts.

    `skipped` counts samples the extractor dropped as unreadable (a non-numeric value such as
    dcgm-exporter's `ERROR - FAILED TO CONVERT TO STRING`, or a blank sentinel).
    """

    gauges: list[Sample]
    raw: RawSnapshot
    info: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    skipped: int = 0
