"""Which hourly partitions of the raw sample table to create and which to drop (pure).

On PostgreSQL `monitoring_sample` is range-partitioned on `ts` by the hour (48 h of raw
retention are about 50 partitions), plus a default partition that takes any row no hourly
partition covers, so that no write is ever refused. A partition is named by the UTC hour it
starts at: `monitoring_sample_p2026120123` holds [23:00, 00:00) of 2026-12-01.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

TABLE = "monitoring_sample"
DEFAULT_PARTITION = f"{TABLE}_default"
SPAN = timedelta(hours=1)
_NAME = re.compile(rf"^{TABLE}_p(\d{{10}})$")


@dataclass(frozen=True, slots=True)
class Partition:
    name: str
    start: datetime  # inclusive, UTC
    end: datetime  # exclusive


def floor_hour(when: datetime) -> datetime:
    return when.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def partition_at(start: datetime) -> Partition:
    start = floor_hour(start)
    return Partition(f"{TABLE}_p{start:%Y%m%d%H}", start, start + SPAN)


def parse(name: str) -> Partition | None:
    """The hourly partition a table name stands for; None for any other name (the default)."""
    match = _NAME.match(name)
    if match is None:
        return None
    return partition_at(datetime.strptime(match.group(1), "%Y%m%d%H").replace(tzinfo=UTC))


def to_create(existing: set[str], start: datetime, end: datetime) -> list[Partition]:
    """The hourly partitions missing to cover [start, end), oldest first."""
    out, hour = [], floor_hour(start)
    while hour < end:
        partition = partition_at(hour)
        if partition.name not in existing:
            out.append(partition)
        hour += SPAN
    return out


def to_drop(existing: set[str], before: datetime) -> list[Partition]:
    """The hourly partitions whose every row is older than `before`, oldest first."""
    parsed = (parse(name) for name in existing)
    return sorted((p for p in parsed if p is not None and p.end <= before), key=lambda p: p.start)
