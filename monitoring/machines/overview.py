"""Reads for the Machines view: every inventory machine with its GPUs as the exporters see them.

A GPU target belongs to a machine by an explicit link (Target.machines) or else by the host name
its exporter reports (dcgm-exporter's `Hostname` label). Per-GPU values come from the targets'
`latest` (no sample query); who uses a GPU comes from the plan allocation of the vLLM and Ray
targets linked to plans, or else from the exporter's Kubernetes labels.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, lru_cache
from typing import Any

from django.utils import timezone

from inventory.models import Machine
from monitoring.machines import allocation
from monitoring.machines.hosts import short_hostname
from monitoring.models import Target, TargetKind
from monitoring.scrape import keys
from monitoring.scrape.gpu import GpuState, classify
from monitoring.scrape.series import Sample, parse_series_id
from monitoring.targets.state import target_state
from planner.selectors import plan_result

# The plan allocation is re-read at most this often by the poller (it changes with plan links).
ALLOCATION_TTL_S = 60.0
# A cell's values: the per-GPU keys that Target.latest keeps (the key table says which).
GPU_FIELDS = tuple(
    spec.key.removeprefix("gpu.")
    for spec in keys.SERIES
    if spec.target_kind == "gpu" and spec.labels and spec.latest
)


@dataclass(slots=True, kw_only=True)
class GpuCell:
    id: str  # "3", or "3/7" for MIG instance 7 of GPU 3
    values: dict[str, float]
    model: str = ""
    user: str = ""
    user_source: str = ""  # plan | exporter
    state: GpuState = field(init=False)

    def __post_init__(self) -> None:
        self.state = classify(self.utilization_pct, self.memory_used_pct)

    def get(self, name: str) -> float | None:
        return self.values.get(name)

    @property
    def utilization_pct(self) -> float | None:
        return self.values.get("utilization_pct")

    @property
    def memory_used_pct(self) -> float | None:
        return self.values.get("memory_used_pct")

    @property
    def temperature_c(self) -> float | None:
        return self.values.get("temperature_c")

    @property
    def memory_used_mib(self) -> float | None:
        return self.values.get("memory_used_mib")

    @property
    def memory_total_mib(self) -> float | None:
        return self.values.get("memory_total_mib")

    @property
    def xid_last(self) -> float | None:
        return self.values.get("xid_last")

    @property
    def throttled(self) -> bool:
        return bool(self.values.get("throttle_thermal") or self.values.get("throttle_power"))

    def as_dict(self) -> dict[str, Any]:
        """The cell as JSON (the state API) with the attribute names templates use."""
        return {
            "id": self.id,
            "state": self.state,
            "model": self.model,
            "user": self.user,
            "user_source": self.user_source,
            "throttled": self.throttled,
            **{name: self.values.get(name) for name in GPU_FIELDS},
        }


@dataclass(kw_only=True)
class MachineRow:
    """One machine of the view with its GPU cells (given at creation: the counts are kept)."""

    machine: Machine | None
    target: Target | None
    link: str  # explicit | hostname | "" (no GPU target)
    state: str  # the GPU target's poll state, or "none"
    gpus: list[GpuCell] = field(default_factory=list)
    servers: list[Target] = field(default_factory=list)

    @property
    def hostname(self) -> str:
        if self.machine is not None:
            return self.machine.hostname
        return (self.target.info or {}).get("hostname", "") if self.target else ""

    @property
    def inventory_gpus(self) -> int | None:
        return self.machine.gpu_count if self.machine is not None else None

    @cached_property
    def reported_gpus(self) -> int:
        return len({g.id.split("/", 1)[0] for g in self.gpus})

    @cached_property
    def _states(self) -> Counter[GpuState]:
        return Counter(g.state for g in self.gpus)

    def count(self, state: GpuState) -> int:
        return self._states[state]

    @property
    def busy(self) -> int:
        return self._states[GpuState.BUSY]

    @property
    def free(self) -> int:
        return self._states[GpuState.FREE]

    @property
    def idle(self) -> int:
        return sum(n for state, n in self._states.items() if state.idle)

    @property
    def missing(self) -> int:
        """GPUs the inventory lists that the exporter does not report (fell off the bus?)."""
        if self.inventory_gpus is None or not self.gpus:
            return 0
        return max(0, self.inventory_gpus - self.reported_gpus)

    def total(self, name: str) -> float:
        return sum(g.values.get(name) or 0.0 for g in self.gpus)


@dataclass(slots=True, kw_only=True)
class MachinesOverview:
    rows: list[MachineRow]
    totals: dict[str, float]
    generated_at: datetime


def gpu_cells(target: Target) -> list[GpuCell]:
    """Return the GPUs of a GPU target's last successful poll.

    From the readings its poll keeps in `info` (one small document, no query); a target last
    polled before those were kept falls back to its `latest` values.
    """
    info = target.info or {}
    readings = info.get("readings")
    if readings is None:
        return cells_from(target.latest or {}, info.get("gpus", {}))
    return _cells(readings, info.get("gpus", {}))


def cells_from(latest: Mapping[str, float], facts: Mapping[str, Any]) -> list[GpuCell]:
    """Return GPU cells from per-GPU series ids and values and the exporter's facts per GPU."""
    by_gpu: dict[str, dict[str, float]] = defaultdict(dict)
    for sid, value in latest.items():
        if not sid.startswith("gpu.") or "{" not in sid:
            continue
        field_name, gid = _gpu_series(sid)
        by_gpu[gid][field_name] = value
    return _cells(by_gpu, facts)


def _cells(by_gpu: Mapping[str, dict[str, float]], facts: Mapping[str, Any]) -> list[GpuCell]:
    cells = []
    for gid in sorted(by_gpu, key=_gpu_order):
        fact = facts.get(gid, {})
        user = "/".join(p for p in (fact.get("namespace"), fact.get("pod")) if p)
        cells.append(
            GpuCell(
                id=gid,
                values=by_gpu[gid],
                model=fact.get("model", ""),
                user=user,
                user_source="exporter" if user else "",
            )
        )
    return cells


@lru_cache(maxsize=4096)
def _gpu_series(sid: str) -> tuple[str, str]:
    """Return (field name, GPU id) of a per-GPU series id; the same few ids recur fleet-wide."""
    key, labels = parse_series_id(sid)
    gpu = labels.get("gpu", "")
    return key.removeprefix("gpu."), f"{gpu}/{labels['mig']}" if labels.get("mig") else gpu


def _gpu_order(gid: str) -> tuple[int, int, str]:
    gpu, _, mig = gid.partition("/")
    return (
        int(gpu) if gpu.isdigit() else 1 << 30,
        int(mig) if mig.isdigit() else -1,
        gid,
    )


def plan_allocation(servers: Iterable[Target] | None = None) -> dict[str, dict[str, str]]:
    """Return {short host name: {GPU index: server name}} from the plans linked to targets."""
    if servers is None:
        servers = (
            Target.objects.filter(plan__isnull=False)
            .exclude(kind=TargetKind.GPU)
            .select_related("plan")
            .defer("token", "plan__spec", "plan__engine_input")
            .order_by("name")
        )
    table = allocation.allocate(
        (t.name, plan_result(t.plan)) for t in servers if t.plan is not None
    )
    return {short_hostname(host): gpus for host, gpus in table.items()}


# What the view reads of machines and GPU targets (target_state, the cards, gpu_cells).
MACHINE_FIELDS = ("pk", "hostname", "gpu_count", "gpu_metrics_url", "gpu_type__name")
TARGET_FIELDS = (
    "pk",
    "name",
    "kind",
    "enabled",
    "poll_interval_s",
    "last_status",
    "last_poll_at",
    "last_success_at",
    "last_error_kind",
    "info",
)


@dataclass(frozen=True, slots=True)
class PollContext:
    """What a GPU poll needs from the database, re-read at most every ALLOCATION_TTL_S.

    `allocation`: {short host name: {GPU index: server name}} of the linked plans; `linked`:
    {GPU target id: host name of its explicitly linked machine}.
    """

    allocation: dict[str, dict[str, str]]
    linked: dict[int, str]


_cache: dict[str, Any] = {}


def cached_poll_context() -> PollContext:
    """The PollContext of this process: two queries a minute instead of several per poll."""
    now = time.monotonic()
    if _cache.get("until", 0.0) < now:
        links = Target.machines.through.objects.filter(target__kind=TargetKind.GPU)
        linked: dict[int, str] = {}
        for target_id, hostname in links.order_by("machine__hostname").values_list(
            "target_id", "machine__hostname"
        ):
            linked.setdefault(target_id, hostname)
        _cache["context"] = PollContext(allocation=plan_allocation(), linked=linked)
        _cache["until"] = now + ALLOCATION_TTL_S
    return _cache["context"]


def forget_cached() -> None:
    """Drop the cached PollContext (tests; the next poll reads it again)."""
    _cache.clear()


def idle_planned(cells: Iterable[GpuCell], allocated: Mapping[str, str]) -> int:
    """Count GPUs the plan gives to a server that compute nothing."""
    return sum(1 for g in cells if g.id.split("/", 1)[0] in allocated and g.state.idle)


def _assign_users(
    cells: Iterable[GpuCell], hostname: str, table: Mapping[str, dict[str, str]]
) -> None:
    """Name each GPU's user from the plan allocation of its host (over the exporter's labels)."""
    planned = table.get(short_hostname(hostname), {})
    for cell in cells:
        user = planned.get(cell.id.split("/", 1)[0])
        if user:
            cell.user, cell.user_source = user, "plan"


def machines_overview(*, now: datetime | None = None) -> MachinesOverview:
    """Return every machine with its GPU target's GPUs, plus GPU targets no machine matches.

    Four queries whatever the fleet size: machines, GPU targets, explicit links, linked servers.
    """
    now = now or timezone.now()
    machines = list(
        Machine.objects.select_related("gpu_type").only(*MACHINE_FIELDS).order_by("hostname")
    )
    # Not `latest`: the cells come from `info` (gpu_cells), and every series' latest value of
    # 200 machines is most of the bytes to read and decode (a target polled before readings
    # were kept loads its `latest` alone, until its next poll).
    targets = list(Target.objects.filter(kind=TargetKind.GPU).only(*TARGET_FIELDS).order_by("name"))
    links = Target.machines.through.objects.filter(target__in=[t.pk for t in targets])
    explicit: dict[int, Target] = {}
    by_id = {t.pk: t for t in targets}
    for target_id, machine_id in links.values_list("target_id", "machine_id"):
        explicit.setdefault(machine_id, by_id[target_id])
    by_host: dict[str, Target] = {}
    linked = {t.pk for t in explicit.values()}
    for t in targets:
        hostname = (t.info or {}).get("hostname")
        if t.pk in linked:
            continue  # its explicit link says which machine it is
        if hostname:
            by_host.setdefault(short_hostname(hostname), t)
    servers = list(
        Target.objects.exclude(kind=TargetKind.GPU)
        .select_related("plan")
        .defer("token", "info", "latest", "discovered_exporters")
        .prefetch_related("machines")
        .order_by("name")
    )
    table = plan_allocation(servers)
    servers_by_host: dict[str, list[Target]] = defaultdict(list)
    for server in servers:
        hosts = {short_hostname(m.hostname) for m in server.machines.all()}
        hosts |= {h for h, gpus in table.items() if server.name in gpus.values()}
        for host in hosts:
            servers_by_host[host].append(server)

    def cells(target: Target | None, state: str, hostname: str) -> list[GpuCell]:
        if target is None or state not in ("up", "stale"):
            return []
        found = gpu_cells(target)
        _assign_users(found, hostname, table)
        return found

    rows: list[MachineRow] = []
    used: set[int] = set()
    for machine in machines:
        target = explicit.get(machine.pk)
        link = "explicit" if target else ""
        if target is None:
            target = by_host.get(short_hostname(machine.hostname))
            link = "hostname" if target else ""
            if target is not None and target.pk in used:
                target, link = None, ""  # two machines of one short name: the first keeps it
        state = target_state(target, now) if target else "none"
        if target is not None:
            used.add(target.pk)
        rows.append(
            MachineRow(
                machine=machine,
                target=target,
                link=link,
                state=state,
                gpus=cells(target, state, machine.hostname),
                servers=servers_by_host.get(short_hostname(machine.hostname), []),
            )
        )
    for target in targets:
        if target.pk not in used:  # an exporter whose host is not in the inventory
            state = target_state(target, now)
            rows.append(
                MachineRow(
                    machine=None,
                    target=target,
                    link="",
                    state=state,
                    gpus=cells(target, state, (target.info or {}).get("hostname", "")),
                )
            )
    return MachinesOverview(rows=rows, totals=_totals(rows), generated_at=now)


def _totals(rows: list[MachineRow]) -> dict[str, float]:
    return {
        "machines": sum(1 for r in rows if r.machine is not None),
        "monitored": sum(1 for r in rows if r.target is not None),
        "gpus_inventory": sum(r.inventory_gpus or 0 for r in rows),
        "gpus_reported": sum(r.reported_gpus for r in rows),
        "gpus_busy": sum(r.busy for r in rows),
        "gpus_idle": sum(r.idle for r in rows),
        "gpus_free": sum(r.free for r in rows),
        "gpus_missing": sum(r.missing for r in rows),
        "memory_used_mib": sum(r.total("memory_used_mib") for r in rows),
        "memory_total_mib": sum(r.total("memory_total_mib") for r in rows),
    }


def _machine_for(target: Target) -> tuple[Machine | None, str]:
    machine = target.machines.order_by("hostname").first()
    if machine is not None:
        return machine, "explicit"
    hostname = (target.info or {}).get("hostname")
    if hostname:
        for candidate in Machine.objects.filter(hostname__istartswith=short_hostname(hostname)):
            if short_hostname(candidate.hostname) == short_hostname(hostname):
                return candidate, "hostname"
    return None, ""


def gpu_state(target: Target) -> dict[str, Any]:
    """Return a GPU target page's state: its machine and every GPU (also the state API's)."""
    machine, link = _machine_for(target)
    cells = gpu_cells(target)
    hostname = machine.hostname if machine else (target.info or {}).get("hostname", "")
    _assign_users(cells, hostname, plan_allocation())
    row = MachineRow(machine=machine, target=target, link=link, state="up", gpus=cells)
    return {
        "hostname": (target.info or {}).get("hostname", ""),
        "machine": (
            {"id": machine.pk, "hostname": machine.hostname, "gpu_count": machine.gpu_count}
            if machine
            else None
        ),
        "link": link,
        "gpu_ids": [g.id for g in row.gpus],
        "gpus": [g.as_dict() for g in row.gpus],
        "free": row.free,
        "busy": row.busy,
        "missing": row.missing,
    }


def poll_extras(target: Target, samples: list[Any], info: Mapping[str, Any]) -> list[Any]:
    """Samples a GPU poll adds from the database: idle GPUs the linked plans allocate.

    Stored as `gpu.machine.gpus_idle_planned` (the "idle while the plan expects busy" alert);
    nothing when the machine is unknown. The machine is the explicitly linked one, else the
    host name the exporter reports (by its short name, as the view links them).
    """
    cells = _cells(info.get("readings", {}), info.get("gpus", {}))
    if not cells:
        return []
    context = cached_poll_context()
    hostname = context.linked.get(target.pk) or info.get("hostname", "")
    if not hostname:
        return []
    allocated = context.allocation.get(short_hostname(hostname), {})
    return [Sample("gpu.machine.gpus_idle_planned", (), float(idle_planned(cells, allocated)))]
