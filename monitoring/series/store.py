"""The series-store interface: every read and write of stored samples goes through it.

Callers (the series API and dashboards, alerts, plan vs reality, evidence, calibration) use
`monitoring.stores.current()` and never know which backend answers: the embedded tables
(monitoring.stores.embedded, the default) or a Prometheus-compatible server
(monitoring.stores.prometheus). Read-only targets (a PromQL selector instead of a URL) are
answered by the Prometheus side whatever the backend (monitoring.stores.routing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol

from .model import (
    ForgetReport,
    LatestValue,
    Points,
    RangeResult,
    SeriesMatch,
    TargetRef,
    WriteBatch,
    WriteReport,
)


class SeriesStore(Protocol):
    name: str

    def write(self, batch: WriteBatch) -> None:
        """Store one poll's samples (embedded: in the caller's transaction; remote: buffered)."""

    def write_report(self) -> WriteReport:
        """Return what became of the samples written so far (pending, lost)."""

    def write_fleet_sums(self, ts: datetime, sums: Mapping[str, float]) -> None:
        """Store the fleet's sums of one scheduler tick, which `fleet_sum` reads for the
        whole polled fleet (monitoring.fleet)."""

    def forget(self, target: TargetRef) -> ForgetReport:
        """Delete every series of a target that was deleted (embedded: gone with its rows)."""

    def range(
        self,
        targets: Sequence[TargetRef],
        series: Sequence[SeriesMatch],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        """Return each matching series of each target, averaged into at most `max_points`
        time buckets, with a gap (None) wherever polls are missing."""

    def fleet_sum(
        self,
        targets: Sequence[TargetRef],
        keys: Sequence[str],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        """Return, per unlabelled key, its sum over `targets` per time bucket (target None)."""

    def latest(self, target: TargetRef, keys: Iterable[str]) -> list[LatestValue]:
        """Return every label set of `keys` at the target's last successful poll."""

    def window(
        self, target: TargetRef, keys: Iterable[str], start: datetime, end: datetime
    ) -> dict[str, Points]:
        """Return (time, value) of each unlabelled key per poll in the window, finite values
        only; series of one target share their timestamps (callers join on them)."""

    def total(
        self, targets: Sequence[TargetRef], key: str, start: datetime, end: datetime
    ) -> float:
        """Return the sum of every sample of unlabelled `key` of `targets` in the window."""
