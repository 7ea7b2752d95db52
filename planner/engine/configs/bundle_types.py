"""What a deployment bundle is made of: its files, steps, host networks and the bundle itself.

Below both the bundle builder (bundle.py) and the Ansible deploy files (deploy/) that read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from planner.engine.configs.allocation import AllocationTable
from planner.engine.configs.weights import ServedModel
from planner.engine.result import Backend, Route


class StepKind(StrEnum):
    LAUNCH = "launch"  # launch-HOST.sh: Ray nodes, mp vLLM processes, Nginx
    SERVE = "serve"  # serve-HOST.sh: vLLM on a Ray cluster, or `serve deploy`
    CHECK = "check"  # check-HOST.sh: nvidia-smi, curl /health, ray status


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    host: str
    script: str
    kind: StepKind
    processes: tuple[str, ...]  # the table's process names the script starts (or checks)


@dataclass(frozen=True, slots=True, kw_only=True)
class BundleFile:
    name: str
    text: str
    executable: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class HostNetwork:
    """The data NIC NCCL uses on a host and the speed the plan assumed (preflight checks it)."""

    host: str
    interface: str
    speed_gbps: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Bundle:
    route: Route
    backend: Backend
    models: tuple[str, ...]  # display names, one per model
    labels: tuple[str, ...]  # layouts, e.g. TP4×PP2×1
    image: str
    table: AllocationTable
    files: tuple[BundleFile, ...]
    steps: tuple[Step, ...]
    kv_tokens_per_replica: tuple[int, ...]
    quantized_paths: tuple[str, ...]  # /models/... checkpoints the operator must provide
    # Hosts of a shared pool where the plan may use only some GPUs: the table numbers them
    # from 0, the operator maps them to the GPUs that are actually free.
    partly_free_hosts: tuple[str, ...] = ()
    served: tuple[ServedModel, ...] = ()  # every model's weights and the path hosts serve from
    gpu_memory_utilization: float = 0.9  # the share of each GPU vLLM takes: must be free
    networks: tuple[HostNetwork, ...] = ()  # multi-host bundles: the NCCL interface per host

    def file(self, name: str) -> str:
        return next(f.text for f in self.files if f.name == name)

    def file_map(self) -> dict[str, str]:
        return {f.name: f.text for f in self.files}

    def to_dict(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "backend": self.backend,
            "models": list(self.models),
            "labels": list(self.labels),
            "image": self.image,
            "allocation": self.table.to_dict(),
            "steps": [
                {"host": s.host, "script": s.script, "kind": str(s.kind), "processes": s.processes}
                for s in self.steps
            ],
            "files": {f.name: f.text for f in self.files},
            "kv_tokens_per_replica": list(self.kv_tokens_per_replica),
            "quantized_paths": list(self.quantized_paths),
            "partly_free_hosts": list(self.partly_free_hosts),
            "served": [m.to_dict() for m in self.served],
        }
