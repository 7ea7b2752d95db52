"""Which hourly partitions of the raw sample table to create and which to drop (pure).

On PostgreSQL `monitoring_sample` is range-partitioned on `ts` by the hour (48 h of raw
retention are about 50 partitions), plus a default partition that takes any row no hourly
partition covers, so that no write is ever refused. A partition is named by the UTC hour it
starts at: `monitoring_sample_p2026120123` holds [23:00, 00:00) of 2026-12-01.

A database upgraded with samples in it (migration 0016) also has one legacy partition: the
table as it was, kept in place and attached, holding every row before a cut-off hour it is
named by (`monitoring_sample_legacy_before2026120206`: everything before 06:00 of 2026-12-02).
No hourly partition is made below it; its expired rows are deleted in batches, like the default
partition's, and it is dropped whole once its cut-off is past the retention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

TABLE = "monitoring_sample"
DEFAULT_PARTITION = f"{TABLE}_default"
LEGACY_PREFIX = f"{TABLE}_legacy_before"
SPAN = timedelta(hours=1)
_NAME = re.compile(rf"^{TABLE}_p(\d{{10}})$")
_LEGACY = re.compile(rf"^{LEGACY_PREFIX}(\d{{10}})$")


@dataclass(frozen=True, slots=True)
class Partition:
    name: str
    start: datetime | None  # inclusive, UTC; None: no lower bound (the legacy partition)
    end: datetime  # exclusive

    @property
    def legacy(self) -> bool:
        return self.start is None


def floor_hour(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def partition_at(start: datetime) -> Partition:
    start = floor_hour(start)
    return Partition(f"{TABLE}_p{start:%Y%m%d%H}", start, start + SPAN)


def legacy_partition(end: datetime) -> Partition:
    """The legacy partition holding every row before the hour `end` falls in."""
    end = floor_hour(end)
    return Partition(f"{LEGACY_PREFIX}{end:%Y%m%d%H}", None, end)


def _hour_of(digits: str) -> datetime:
    return datetime.strptime(digits, "%Y%m%d%H").replace(tzinfo=UTC)


def parse(name: str) -> Partition | None:
    """The hourly or legacy partition a table name stands for; None for any other (the default)."""
    if match := _NAME.match(name):
        return partition_at(_hour_of(match.group(1)))
    if match := _LEGACY.match(name):
        return legacy_partition(_hour_of(match.group(1)))
    return None


def _parsed(existing: set[str]) -> list[Partition]:
    return [p for p in map(parse, existing) if p is not None]


def to_create(existing: set[str], start: datetime, end: datetime) -> list[Partition]:
    """The hourly partitions missing to cover [start, end), oldest first.

    Hours a legacy partition covers get none: their rows already have a partition, and a new
    one would overlap it."""
    hour = floor_hour(start)
    covered = [p.end for p in _parsed(existing) if p.legacy]
    if covered:
        hour = max(hour, *covered)
    out = []
    while hour < end:
        partition = partition_at(hour)
        if partition.name not in existing:
            out.append(partition)
        hour += SPAN
    return out


def to_drop(existing: set[str], before: datetime) -> list[Partition]:
    """The hourly (or legacy) partitions whose every row is older than `before`, oldest first."""
    return sorted((p for p in _parsed(existing) if p.end <= before), key=lambda p: p.end)


def deleted_by_rows(existing: set[str]) -> list[str]:
    """The partitions whose expired rows retention deletes in batches, as they hold rows of any
    hour: the default partition, then a legacy one."""
    legacy = sorted(p.name for p in _parsed(existing) if p.legacy)
    return [name for name in (DEFAULT_PARTITION, *legacy) if name in existing]
