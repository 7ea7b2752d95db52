"""Spans of time a target's charts mark (a load benchmark, for one), from apps above monitoring.

Monitoring imports no app above it: an app registers a source at start-up
(`register_time_marks` in its AppConfig.ready) and the series API adds what the sources return
for the target and the range, which the dashboards draw as shaded spans.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeMark:
    start: datetime
    end: datetime | None  # None: still going
    label: str
    url: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "start": int(self.start.timestamp() * 1000),
            "end": None if self.end is None else int(self.end.timestamp() * 1000),
            "label": self.label,
            "url": self.url,
        }


MarkSource = Callable[[int, datetime, datetime], list[TimeMark]]
_SOURCES: list[MarkSource] = []


def register_time_marks(source: MarkSource) -> None:
    """Add a source of marks: (target id, range start, range end) -> marks in that range."""
    if source not in _SOURCES:
        _SOURCES.append(source)


def time_marks(target_id: int, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Return every registered source's marks for the target in the range, as JSON."""
    return [mark.to_json() for source in _SOURCES for mark in source(target_id, start, end)]
