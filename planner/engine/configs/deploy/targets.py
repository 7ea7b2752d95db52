"""What a deployment registers in ServePlan's monitoring and what its smoke test asks.

Both come from the allocation table: every vLLM API server, every host's GPU exporter and the
Ray head's dashboard become targets linked to the plan; every API server, every balancer and
the Serve proxy get one completion.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from catalog.identifiers import host_port
from planner.engine.configs.allocate import RAY_DASHBOARD_PORT, SERVE_HTTP_PORT
from planner.engine.configs.allocation import AllocationTable, ProcessKind
from planner.engine.configs.weights import ServedModel

TARGET_NAME_MAX = 100  # monitoring.Target.name


class TargetKind(StrEnum):  # the values of monitoring.models.TargetKind
    VLLM = "vllm"
    RAY = "ray"
    GPU = "gpu"


class TargetScope(StrEnum):  # the values of monitoring.models.PlanScope
    REPLICA = "replica"
    PLAN = "plan"


@dataclass(frozen=True, slots=True, kw_only=True)
class MonitoringTarget:
    """One ServePlan monitoring target a deployment registers, linked to its plan."""

    name: str
    kind: TargetKind
    base_url: str
    plan_scope: TargetScope
    host: str

    def to_dict(self) -> dict[str, str]:
        return {
            "name": self.name,
            "kind": str(self.kind),
            "base_url": self.base_url,
            "plan_scope": str(self.plan_scope),
            "host": self.host,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SmokeEndpoint:
    """Where the smoke test sends one completion: a server, a balancer, or the Serve proxy."""

    label: str
    base_url: str  # http://ADDRESS:PORT plus the route prefix (Route C), without /v1
    model: str  # the served name asked for


def target_name(host: str, process: str) -> str:
    """Return `HOST/PROCESS`, shortened with a hash when it exceeds the target name's limit.

    The same server keeps its name across bundles: a new plan on the same hosts re-links it.
    """
    name = f"{host}/{process}"
    if len(name) <= TARGET_NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    keep = TARGET_NAME_MAX - len(process) - len(digest) - 2
    return f"{host[:keep]}~{digest}/{process}"


def _url(address: str, port: int) -> str:
    return f"http://{host_port(address, port)}"


def monitoring_targets(table: AllocationTable) -> tuple[MonitoringTarget, ...]:
    """Return the targets of a deployment: API servers, GPU exporters, the Ray head."""
    out = []
    for h in table.hosts:
        for p in h.processes:
            if p.kind is ProcessKind.VLLM and p.ports:
                kind, url, scope = TargetKind.VLLM, _url(h.address, p.ports[0]), TargetScope.REPLICA
            elif p.kind is ProcessKind.GPU_EXPORTER:
                kind, url, scope = TargetKind.GPU, _url(h.address, p.ports[0]), TargetScope.PLAN
            elif p.kind is ProcessKind.RAY_HEAD:
                kind, url = TargetKind.RAY, _url(h.address, RAY_DASHBOARD_PORT)
                scope = TargetScope.PLAN
            else:
                continue
            out.append(
                MonitoringTarget(
                    name=target_name(h.host, p.name),
                    kind=kind,
                    base_url=url,
                    plan_scope=scope,
                    host=h.host,
                )
            )
    return tuple(out)


def smoke_endpoints(
    table: AllocationTable, served: Sequence[ServedModel]
) -> tuple[SmokeEndpoint, ...]:
    """Return every endpoint the smoke test asks: each server, each balancer, the Serve proxy."""
    out = []
    model = served[0].served_name
    for h in table.hosts:
        for p in h.processes:
            if p.kind in (ProcessKind.VLLM, ProcessKind.NGINX) and p.ports:
                out.append(
                    SmokeEndpoint(
                        label=f"{h.host}/{p.name}",
                        base_url=_url(h.address, p.ports[0]),
                        model=p.flag("--served-model-name") or model,  # a pool serves several
                    )
                )
            elif p.kind is ProcessKind.ROUTER:  # one endpoint: ask it for every model
                out += [
                    SmokeEndpoint(
                        label=f"{h.host}/{p.name}/{m.served_name}",
                        base_url=_url(h.address, p.ports[0]),
                        model=m.served_name,
                    )
                    for m in served
                ]
    if table.serve:
        head = next(
            h for h in table.hosts if any(p.kind is ProcessKind.RAY_HEAD for p in h.processes)
        )
        for m in served:
            prefix = m.route_prefix.rstrip("/")
            out.append(
                SmokeEndpoint(
                    label=f"{head.host}/serve{prefix or '/'}",
                    base_url=_url(head.address, SERVE_HTTP_PORT) + prefix,
                    model=m.served_name,
                )
            )
    return tuple(out)
