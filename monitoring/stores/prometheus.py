"""The Prometheus-compatible series store: remote write for polls, PromQL over HTTP for reads.

Works with Prometheus (`--web.enable-remote-write-receiver`), VictoriaMetrics (/api/v1/write),
and the other servers that speak both protocols (Mimir, Thanos receive). How ServePlan's series
are named there: monitoring.series.remote_write.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from django.db import transaction

from core import opsmetrics
from monitoring import fleet
from monitoring.scrape.series import freeze_labels, parse_series_id
from monitoring.series import (
    ForgetReport,
    Forgotten,
    LatestValue,
    Points,
    RangeResult,
    SeriesMatch,
    SeriesPoints,
    StoreUnavailable,
    TargetRef,
    WriteBatch,
    WriteReport,
    WriteSample,
    promql,
)
from monitoring.series import remote_write as rw
from monitoring.series.buffer import LeftOut, Refused, RetryBuffer, RetryLater
from monitoring.series.promql_range import Grid, Matrix, bucketed, ms, read, result
from monitoring.stores.spool import live_batches

logger = logging.getLogger(__name__)

# Requests one flush may send: after an outage the backlog drains a few polls at a time, and
# no poll waits for all of it (up to 20 x 5,000 samples per poll).
MAX_REQUESTS_PER_FLUSH = 20
# How long after a target's deletion one of its writes can still reach the server: every
# request leaves out the targets deleted by then (send), so only one request that left just
# before can, and httpx bounds each of its phases (pool wait, connect, write, read) by the
# timeout. forget() asks for a second delete after that, with a margin for a busy machine.
REQUEST_PHASES = 4
FORGET_AGAIN_MARGIN_S = 5.0
# WriteReport's counts, each an `outcome` of serveplan_remote_write_samples.
OUTCOMES = ("written", "dropped", "target_deleted")


class PrometheusStore:
    name = "prometheus"

    def __init__(
        self,
        *,
        query_url: str,
        write_url: str,
        buffer: RetryBuffer,
        timeout_s: float = 10.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.query_url = query_url.rstrip("/")
        self.write_url = write_url
        self.buffer = buffer
        self.timeout_s = timeout_s
        self.client = client or httpx.Client(trust_env=False, follow_redirects=False)
        self._reported = WriteReport()
        self._includes_left_end: bool | None = None

    # --- writes --------------------------------------------------------------------------

    def write(self, batch: WriteBatch) -> None:
        """Queue the poll's samples; they leave when the poll's transaction commits (a poll
        rolled back sends nothing)."""
        transaction.on_commit(lambda: self._queue(batch))

    def _queue(self, batch: WriteBatch) -> None:
        dropped = self.buffer.add(batch)
        if dropped:
            logger.warning("remote write buffer full: %d samples dropped", dropped)
        self.flush()

    def flush(self) -> bool:
        """Send what is pending; return True when nothing is left (also counts the outcome in
        ServePlan's own /metrics: serveplan_remote_write_samples{outcome}; `target_deleted`
        apart from `dropped`: those samples' target was deleted, nothing anyone wants is lost)."""
        done = self.buffer.flush(self.send, max_requests=MAX_REQUESTS_PER_FLUSH)
        report = self.buffer.report()
        for outcome in OUTCOMES:
            delta = getattr(report, outcome) - getattr(self._reported, outcome)
            if delta:
                opsmetrics.increment(
                    "serveplan_remote_write_samples", {"outcome": outcome}, amount=delta
                )
        if report.dropped > self._reported.dropped:
            logger.warning(
                "remote write: %d samples lost so far (%s)",
                report.dropped,
                "; ".join(report.errors[-2:]),
            )
        if report.target_deleted > self._reported.target_deleted:
            logger.info(
                "remote write: %d samples of deleted targets not sent (not a loss)",
                report.target_deleted - self._reported.target_deleted,
            )
        self._reported = report
        return done

    def send(self, batches: Sequence[WriteBatch]) -> LeftOut:
        """Send one request, without the batches of targets deleted meanwhile (a poll that
        committed just before its target was deleted would bring its series back after
        forget() deleted them: see forget_again_s for the one request already under way)."""
        live = live_batches(batches)
        gone = live.target_deleted
        if not live.batches:
            return LeftOut(target_deleted=gone)
        try:
            response = self.client.post(
                self.write_url,
                content=rw.encode(live.batches),
                headers=rw.HEADERS,
                timeout=self.timeout_s,
            )
        except httpx.HTTPError as exc:
            raise RetryLater(f"{type(exc).__name__}: {exc}") from None
        if response.status_code == 429 or response.status_code >= 500:
            raise RetryLater(f"HTTP {response.status_code}")
        if response.status_code >= 400:
            raise Refused(
                f"HTTP {response.status_code}: {response.text[:200]}", target_deleted=gone
            )
        return LeftOut(target_deleted=gone)

    def write_report(self) -> WriteReport:
        return self.buffer.report()

    def forget(self, target: TargetRef) -> ForgetReport:
        """Delete the target's series through the admin API (Prometheus needs
        --web.enable-admin-api; VictoriaMetrics has it on; Mimir has none): say so if refused."""
        selector = promql.stored_all(target.id)
        try:
            response = self.client.post(
                f"{self.query_url}/api/v1/admin/tsdb/delete_series",
                data={"match[]": selector},
                timeout=self.timeout_s,
            )
        except httpx.HTTPError as exc:
            return ForgetReport(
                outcome=Forgotten.KEPT, selector=selector, reason=type(exc).__name__
            )
        if response.status_code >= 300:
            reason = f"HTTP {response.status_code}: {response.text[:200].strip()}"
            return ForgetReport(outcome=Forgotten.KEPT, selector=selector, reason=reason)
        return ForgetReport(
            outcome=Forgotten.DELETED, selector=selector, again_after_s=self.forget_again_s
        )

    @property
    def forget_again_s(self) -> float:
        """The longest a write that left before a target's deletion may take to arrive."""
        return REQUEST_PHASES * self.timeout_s + FORGET_AGAIN_MARGIN_S

    # --- reads ---------------------------------------------------------------------------

    def _api(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self.client.post(
                f"{self.query_url}/api/v1/{path}", data=params, timeout=self.timeout_s
            )
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise StoreUnavailable(f"time-series server: {type(exc).__name__}") from None
        if body.get("status") != "success":
            raise StoreUnavailable(f"time-series server: {body.get('error', response.status_code)}")
        return body["data"]

    def _window(self, grid: Grid) -> str:
        if self._includes_left_end is None:
            self._includes_left_end = self._is_prometheus_2()
        return grid.window(includes_left_end=bool(self._includes_left_end))

    def _is_prometheus_2(self) -> bool | None:
        """Whether the server is Prometheus 2 (or Mimir 2, its engine), whose range selectors
        include their left end; VictoriaMetrics answers its build info empty, Prometheus 3
        leaves the left end out. None (asked again at the next read) only when the server does
        not answer at all: one without build info (a 404, not JSON) is asked once."""
        try:
            response = self.client.get(
                f"{self.query_url}/api/v1/status/buildinfo", timeout=self.timeout_s
            )
        except httpx.HTTPError:
            return None
        try:
            data = response.json().get("data") or {}
        except (ValueError, AttributeError):
            return False
        return str(data.get("version", "")).startswith("2.")

    def query_range(self, expr: str, start_ms: int, end_ms: int, step_ms: int) -> Matrix:
        data = self._api(
            "query_range",
            {"query": expr, "start": start_ms / 1000, "end": end_ms / 1000, "step": step_ms / 1000},
        )
        return [
            (row["metric"], [(float(t), float(v)) for t, v in row["values"]])
            for row in data["result"]
        ]

    def query(self, expr: str, at: datetime) -> Matrix:
        """Return an instant query's answer as a matrix (a vector's rows hold one point)."""
        data = self._api("query", {"query": expr, "time": at.timestamp()})
        rows = data["result"]
        if data["resultType"] == "matrix":
            return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in rows]
        if data["resultType"] == "vector":
            return [(r["metric"], [(float(r["value"][0]), float(r["value"][1]))]) for r in rows]
        return []

    def raw(self, selector: str, start: datetime, end: datetime) -> Matrix:
        """Return the stored samples of `selector` with start <= t <= end, as written."""
        # One ms more: some servers' ranges are open on the left (VictoriaMetrics).
        span_ms = ms(end) - ms(start) + 1
        rows = self.query(f"{selector}[{span_ms}ms]", end)
        low = start.timestamp()
        return [(m, [(t, v) for t, v in points if t >= low]) for m, points in rows]

    def range(
        self,
        targets: Sequence[TargetRef],
        series: Sequence[SeriesMatch],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        grid = Grid.buckets(start, end, max_points)
        by_id = {t.id: t for t in targets}
        if not targets or not series:
            return result(grid)
        found: dict[tuple[int, str, tuple[tuple[str, str], ...]], SeriesPoints] = {}
        for match in dict.fromkeys(series):
            wanted = (
                None if match.labels is None else freeze_labels(dict(_parse_labels(match.labels)))
            )
            selector = promql.stored(match.key, list(by_id), unlabelled=match.labels == "")
            if wanted:
                extra = [promql.Matcher(rw.sample_label_name(n), "=", v) for n, v in wanted]
                selector = selector[:-1] + "," + ",".join(map(str, extra)) + "}"
            rows = read(self.query_range, f"avg_over_time({selector}[{self._window(grid)}])", grid)
            for metric, points in rows:
                target_id, labels = rw.series_labels(metric)
                if target_id not in by_id or (wanted is not None and labels != wanted):
                    continue
                found[(target_id, match.key, labels)] = bucketed(
                    target_id, match.key, labels, points, grid, by_id[target_id].interval_s
                )
        return result(grid, (found[k] for k in sorted(found)))

    def write_fleet_sums(self, ts: datetime, sums: Mapping[str, float]) -> None:
        samples = tuple(WriteSample(key, (), value) for key, value in sorted(sums.items()))
        self.write(WriteBatch(target=rw.FLEET, ts=ts, samples=samples))

    def fleet_sum(
        self,
        targets: Sequence[TargetRef],
        keys: Sequence[str],
        start: datetime,
        end: datetime,
        max_points: int,
    ) -> RangeResult:
        """The whole polled fleet's sums come from the series the scheduler's tick writes
        (one series per key, whatever the fleet's size: summing 2,000 targets' series took
        Prometheus seconds); a subset, or a window before the first tick, from the targets'."""
        grid = Grid.buckets(start, end, max_points)
        if targets and fleet.covers_polled_fleet(t.id for t in targets):
            sums = self._sum_series([rw.FLEET], keys, grid, fleet.TICK_LATE_S)
            if any(s.values for s in sums):
                return result(grid, sums)
        shortest = min((t.interval_s for t in targets), default=None)
        return result(grid, self._sum_series(targets, keys, grid, shortest))

    def _sum_series(
        self, targets: Sequence[TargetRef], keys: Sequence[str], grid: Grid, gap_s: float | None
    ) -> list[SeriesPoints]:
        ids = [t.id for t in targets]
        out = []
        for key in keys:
            rows = []
            if ids:
                stored = promql.stored(key, ids, unlabelled=True)
                expr = f"sum(avg_over_time({stored}[{self._window(grid)}]))"
                rows = read(self.query_range, expr, grid)
            points = rows[0][1] if rows else []
            out.append(bucketed(None, key, (), points, grid, gap_s))
        return out

    def _keys_selector(self, keys: Iterable[str], target: TargetRef, *, unlabelled: bool) -> str:
        names = "|".join(rw.metric_name(k) for k in sorted(set(keys)))
        one = promql.stored("x", [target.id], unlabelled=unlabelled)
        return "{" + f"__name__=~{promql.quote(names)}," + one[one.index("{") + 1 :]

    def latest(self, target: TargetRef, keys: Iterable[str]) -> list[LatestValue]:
        keys = list(keys)
        if target.last_success_at is None or not keys:
            return []
        at_ms = ms(target.last_success_at)
        rows = self.raw(
            self._keys_selector(keys, target, unlabelled=False),
            target.last_success_at - timedelta(seconds=1),
            target.last_success_at,
        )
        out = []
        for metric, points in rows:
            _, labels = rw.series_labels(metric)
            for t, v in points:
                if int(round(t * 1000)) == at_ms:
                    out.append(LatestValue(rw.key_of(metric["__name__"]), labels, v))
        return out

    def window(
        self, target: TargetRef, keys: Iterable[str], start: datetime, end: datetime
    ) -> dict[str, Points]:
        wanted = list(dict.fromkeys(keys))
        out: dict[str, Points] = {key: [] for key in wanted}
        if not wanted:
            return out
        for metric, points in self.raw(
            self._keys_selector(wanted, target, unlabelled=True), start, end
        ):
            key = rw.key_of(metric["__name__"])
            if key in out:
                out[key] = [
                    (datetime.fromtimestamp(t, tz=UTC), v) for t, v in points if math.isfinite(v)
                ]
        return out

    def total(
        self, targets: Sequence[TargetRef], key: str, start: datetime, end: datetime
    ) -> float:
        if not targets:
            return 0.0
        rows = self.raw(promql.stored(key, [t.id for t in targets]), start, end)
        return float(sum(v for _, points in rows for _, v in points if math.isfinite(v)))


def _parse_labels(canonical: str) -> dict[str, str]:
    return parse_series_id("x" + canonical)[1] if canonical else {}
