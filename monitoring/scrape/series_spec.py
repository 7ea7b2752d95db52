"""The value type of the key table: a series key, its kind, labels, source and meaning."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# Keys of every target kind start with one of these; a kind's own keys start with `<kind>.`.
COMMON_PREFIXES = ("scrape.", "poll.")


class SeriesKind(StrEnum):
    GAUGE = "gauge"  # stored as read (or computed from one poll)
    RATE = "rate"  # counter change per second between two polls
    RATIO = "ratio"  # ratio of two counters' changes between two polls
    QUANTILE = "quantile"  # from a histogram's change between two polls

    @property
    def derived(self) -> bool:
        """Needs two polls (a previous raw snapshot) to be computed."""
        return self is not SeriesKind.GAUGE


@dataclass(frozen=True, slots=True)
class SeriesSpec:
    key: str
    kind: SeriesKind
    labels: tuple[str, ...]
    source: str
    description: str
    # Labelled series whose every label set is also kept in Target.latest (tiles, overview).
    latest: bool = False

    @property
    def target_kind(self) -> str:
        """The target kind that stores this key ("" for keys every kind stores)."""
        if self.key.startswith(COMMON_PREFIXES):
            return ""
        return self.key.split(".", 1)[0]


# Short names for the table below.
GAUGE, RATE, RATIO = SeriesKind.GAUGE, SeriesKind.RATE, SeriesKind.RATIO
QUANTILE = SeriesKind.QUANTILE


def quantiles(key: str, labels: tuple[str, ...], source: str, what: str) -> list[SeriesSpec]:
    return [
        SeriesSpec(f"{key}.{q}", QUANTILE, labels, source, f"{what}, {q} between two polls")
        for q in ("p50", "p95", "p99", "mean")
    ]
