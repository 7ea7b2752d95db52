"""The live poll of a Ray cluster: discover its exporters from the dashboard, read each one,
merge them, and add the dashboard's placement-group and reservation state."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from . import ray, ray_dashboard
from .errors import LimitError, ScrapeError
from .fetch import FetchPolicy, check_url, fetch, is_metrics_endpoint
from .result import PollError, ScrapeResult, poll_samples, previous_snapshot, unique
from .series import Extracted, RawSnapshot, Sample, make_sample

MAX_EXPORTER_THREADS = 8
SD_PATH = "/api/prometheus/sd"
NODES_PATH = "/nodes?view=summary"
PLACEMENT_GROUPS_PATH = "/api/v0/placement_groups?detail=1"
CLUSTER_STATUS_PATH = "/api/cluster_status"


def _split_exporter_url(source: str) -> tuple[str, str] | None:
    url = check_url(source)
    if is_metrics_endpoint(url):
        return str(url), url.netloc.decode("ascii")
    return None


def scrape_cluster(
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
    source_url = check_url(source)
    dashboard = _Dashboard(str(source_url).rstrip("/"), policy, token, client)
    exporters = [single] if single is not None else _discover(dashboard, errors, info)
    exporters = _capped(exporters, policy.limits.max_exporters, errors, source)

    def poll(item: tuple[str, str]) -> tuple[str, Extracted | PollError, int]:
        url, node = item
        try:
            # The token belongs to the dashboard: only send it to an exporter on the same host.
            same_host = check_url(url).host == source_url.host
            body = fetch(url, policy=policy, token=token if same_host else None, client=client)
            return node, ray.extract(body.text(), clock(), node=node), len(body.body)
        except ScrapeError as exc:
            return node, PollError(exc.kind, str(exc), url), 0

    parts: list[Extracted] = []
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
        extra.extend(_dashboard_state(dashboard, errors, info))
    if not parts:
        if not errors:
            errors.append(PollError("source", "no metrics exporter found", source))
        return ScrapeResult(
            kind=ray.KIND, source=source, ts=ts, ok=False, errors=errors, info=info, exporters=asked
        )
    merged = ray.merge(parts, ts)
    prev = previous_snapshot(previous)
    samples = [*merged.gauges, *ray.derive(prev, merged.raw), *extra]
    counts = [
        make_sample("ray.cluster.exporters", float(len(exporters))),
        make_sample("ray.cluster.exporters_failed", float(len(exporters) - len(parts))),
    ]
    samples.extend(s for s in counts if s is not None)
    samples.extend(poll_samples(started, payload))
    info.update(merged.info)
    return ScrapeResult(
        kind=ray.KIND,
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


@dataclass(frozen=True, slots=True)
class _Dashboard:
    """The dashboard a Ray poll reads besides the exporters: its base URL and how to ask it."""

    base: str
    policy: FetchPolicy
    token: str | None
    client: httpx.Client | None

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def read(self, path: str) -> bytes:
        """Return the body at `path`; raise ScrapeError (the caller records it)."""
        response = fetch(self.url(path), policy=self.policy, token=self.token, client=self.client)
        return response.body


def _discover(
    dashboard: _Dashboard, errors: list[PollError], info: dict[str, Any]
) -> list[tuple[str, str]]:
    """Return (exporter URL, node label) pairs from the dashboard (sd first, then nodes).

    The node list is read on every poll: it names nodes by host name and says which are
    DEAD (`info["nodes"]`). Without service discovery its live nodes are the exporters.
    """
    targets: list[str] = []
    try:
        targets = ray_dashboard.exporters_from_sd(dashboard.read(SD_PATH))
    except ScrapeError as exc:
        errors.append(PollError(exc.kind, str(exc), dashboard.url(SD_PATH)))
    try:
        nodes = ray_dashboard.nodes_from_summary(dashboard.read(NODES_PATH))
    except ScrapeError as exc:
        if not targets:
            errors.append(PollError(exc.kind, str(exc), dashboard.url(NODES_PATH)))
        nodes = []
    if nodes:
        info["nodes"] = [
            {
                "node_id": n.node_id,
                "ip": n.ip,
                "hostname": n.hostname,
                "head": n.is_head,
                "state": n.state,
                "exporter": n.exporter or "",
            }
            for n in nodes
        ]
    if targets:
        return [(f"http://{t}/metrics", t) for t in targets]
    return [
        (f"http://{n.exporter}/metrics", n.exporter)
        for n in nodes
        if n.exporter and n.state in ("ALIVE", "")
    ]


def _dashboard_state(
    dashboard: _Dashboard, errors: list[PollError], info: dict[str, Any]
) -> list[Sample]:
    """Read pending placement groups (with reasons) and reservations; failures are recorded."""
    groups: list[ray_dashboard.PlacementGroupInfo] = []
    try:
        groups = ray_dashboard.placement_groups(dashboard.read(PLACEMENT_GROUPS_PATH))
        info["placement_groups_pending"] = [g.as_dict() for g in groups if g.state == "PENDING"]
    except ScrapeError as exc:
        errors.append(PollError(exc.kind, str(exc), dashboard.url(PLACEMENT_GROUPS_PATH)))
    where = dashboard.url(CLUSTER_STATUS_PATH)
    try:
        body = dashboard.read(CLUSTER_STATUS_PATH)
        if info.get("placement_groups_pending"):
            info["placement_groups_pending"] = ray_dashboard.with_strategies(
                info["placement_groups_pending"], ray_dashboard.pending_strategies(body)
            )
        return ray_dashboard.reservations(body, groups)
    except ScrapeError as exc:
        errors.append(PollError(exc.kind, str(exc), where))
    return []
