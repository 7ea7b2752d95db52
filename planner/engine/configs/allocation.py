"""The allocation table of a bundle: what every process on every host claims, and its check.

A bundle is only emitted when its table is consistent: no GPU or port claimed twice on a host,
no GPU beyond what the host offers, Serve replica bounds within the cluster's GPUs, and no
script that names another host's container or address (except the rendezvous peer it joins).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from planner.engine.result import Backend, Route


class ProcessKind(StrEnum):
    VLLM = "vllm"  # vllm serve with the OpenAI API (a replica, or node-rank 0)
    VLLM_HEADLESS = "vllm-headless"  # vllm serve --headless (node-rank > 0 of an mp replica)
    RAY_HEAD = "ray-head"
    RAY_WORKER = "ray-worker"
    SERVE_DEPLOY = "serve-deploy"  # `serve deploy serve.yaml` against the head's dashboard
    NGINX = "nginx"
    GPU_EXPORTER = "gpu-exporter"  # dcgm-exporter: the host's GPU metrics for monitoring
    ROUTER = "router"  # LiteLLM proxy: a pool's one endpoint, routing by the `model` field


@dataclass(frozen=True, slots=True, kw_only=True)
class Process:
    """One long-running process (or one deploy command) of the bundle on one host."""

    host: str
    name: str  # unique on its host: pid file and log file
    kind: ProcessKind
    gpus: tuple[int, ...] = ()  # CUDA_VISIBLE_DEVICES indices claimed on `host`
    # The share of each of its GPUs it claims: 1 owns them; a vLLM server beside another on
    # the same GPU claims its gpu_memory_utilization, and the claims of a GPU add up to <= 1.
    gpu_share: float = 1.0
    ports: tuple[int, ...] = ()  # TCP ports it listens on, on `host`
    replica: int | None = None
    node_rank: int | None = None
    nnodes: int | None = None
    peer: str = ""  # the address it joins: --master-addr or the Ray head's address
    container: str = ""  # docker --name when run in a container
    argv: tuple[str, ...] = ()  # the command, without environment
    env: tuple[tuple[str, str], ...] = ()  # environment it must get (CUDA_VISIBLE_DEVICES, ...)

    @property
    def env_map(self) -> dict[str, str]:
        return dict(self.env)

    def flag(self, name: str) -> str:
        """Return the value after `name` in argv ("" when absent), e.g. --served-model-name."""
        i = self.argv.index(name) if name in self.argv else -1
        return self.argv[i + 1] if 0 <= i < len(self.argv) - 1 else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class HostAllocation:
    host: str
    address: str  # how the other hosts and the balancer reach it
    usable_gpus: int
    processes: tuple[Process, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeReplicas:
    """Route C: one Serve application's replica bounds and GPUs per replica (0.5: two
    replicas share a GPU, Ray's fractional num_gpus)."""

    application: str
    gpus_per_replica: float
    min_replicas: int
    max_replicas: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AllocationTable:
    route: Route
    backend: Backend
    hosts: tuple[HostAllocation, ...]
    serve: tuple[ServeReplicas, ...] = ()

    @property
    def processes(self) -> tuple[Process, ...]:
        return tuple(p for h in self.hosts for p in h.processes)

    def host(self, name: str) -> HostAllocation:
        return next(h for h in self.hosts if h.host == name)

    def to_dict(self) -> dict[str, Any]:
        """Return the table as JSON-able rows (allocation.json, the result page)."""
        return {
            "route": self.route,
            "backend": self.backend,
            "hosts": [
                {
                    "host": h.host,
                    "address": h.address,
                    "usable_gpus": h.usable_gpus,
                    "processes": [
                        {
                            "name": p.name,
                            "kind": str(p.kind),
                            "cuda_visible_devices": ",".join(map(str, p.gpus)),
                            "gpu_share": p.gpu_share,
                            "ports": list(p.ports),
                            "replica": p.replica,
                            "node_rank": p.node_rank,
                            "nnodes": p.nnodes,
                            "peer": p.peer,
                            "container": p.container,
                        }
                        for p in h.processes
                    ],
                }
                for h in self.hosts
            ],
            "serve": [
                {
                    "application": s.application,
                    "gpus_per_replica": s.gpus_per_replica,
                    "min_replicas": s.min_replicas,
                    "max_replicas": s.max_replicas,
                }
                for s in self.serve
            ],
        }


class ClashKind(StrEnum):
    GPU_TWICE = "gpu-claimed-twice"
    PORT_TWICE = "port-claimed-twice"
    GPU_MISSING = "gpu-beyond-host"
    REPLICAS_EXCEED_GPUS = "replicas-exceed-gpus"
    FOREIGN_CONTAINER = "foreign-container"
    FOREIGN_ADDRESS = "foreign-address"
    NAME_TWICE = "name-twice"


@dataclass(frozen=True, slots=True, kw_only=True)
class Clash:
    kind: ClashKind
    host: str
    detail: str

    def __str__(self) -> str:
        return f"{self.host}: {self.kind} ({self.detail})"


class BundleClash(ValueError):
    """The bundle would start processes that fight over GPUs, ports, containers or hosts."""

    def __init__(self, clashes: Iterable[Clash]) -> None:
        self.clashes = tuple(clashes)
        super().__init__("; ".join(str(c) for c in self.clashes))


def table_clashes(table: AllocationTable) -> list[Clash]:
    """Return every inconsistency of the table itself (claims, bounds)."""
    clashes: list[Clash] = []
    for h in table.hosts:
        names: set[str] = set()
        gpus: dict[int, list[Process]] = {}
        ports: dict[int, str] = {}
        for p in h.processes:
            if p.name in names:
                clashes.append(Clash(kind=ClashKind.NAME_TWICE, host=h.host, detail=p.name))
            names.add(p.name)
            for g in p.gpus:
                claims = gpus.setdefault(g, [])
                if claims and sum(c.gpu_share for c in claims) + p.gpu_share > 1 + 1e-9:
                    detail = f"GPU {g}: {claims[0].name} and {p.name}"
                    clashes.append(Clash(kind=ClashKind.GPU_TWICE, host=h.host, detail=detail))
                elif not 0 <= g < h.usable_gpus:
                    detail = f"GPU {g} of {p.name}; the host offers {h.usable_gpus}"
                    clashes.append(Clash(kind=ClashKind.GPU_MISSING, host=h.host, detail=detail))
                claims.append(p)
            for port in p.ports:
                if port in ports:
                    detail = f"port {port}: {ports[port]} and {p.name}"
                    clashes.append(Clash(kind=ClashKind.PORT_TWICE, host=h.host, detail=detail))
                ports.setdefault(port, p.name)
    clashes += _serve_clashes(table)
    return clashes


def gpu_partners(host: HostAllocation) -> dict[str, Process]:
    """Return, for each process that shares a GPU with one started before it on the host, that
    earlier process: it starts once the earlier one serves (vLLM counts memory another process
    takes during its start-up profile against its own budget)."""
    first_on: dict[int, Process] = {}
    partners: dict[str, Process] = {}
    for p in host.processes:
        for g in p.gpus:
            earlier = first_on.setdefault(g, p)
            if earlier is not p and p.gpu_share < 1:
                partners.setdefault(p.name, earlier)
    return partners


def replicas_that_fit(
    usable_gpus: Iterable[int], demands: Sequence[tuple[float, int]]
) -> list[int]:
    """Return how many of each (gpus_per_replica, replicas) demand the nodes hold at once.

    A replica stays on one node; the largest replicas are placed first, node by node, so the
    answer is what every application may reach together (in the order of `demands`). Half-GPU
    replicas pack two to a GPU, as Ray packs fractional GPU requests.
    """
    free: list[float] = sorted(usable_gpus, reverse=True)
    placed = [0] * len(demands)
    for i in sorted(range(len(demands)), key=lambda i: -demands[i][0]):
        size, wanted = demands[i]
        for node, gpus in enumerate(free):
            take = min(int(gpus / size + 1e-9), wanted - placed[i])
            free[node] -= take * size
            placed[i] += take
    return placed


def _serve_clashes(table: AllocationTable) -> list[Clash]:
    if not table.serve:
        return []
    ray_gpus = [
        len(p.gpus)
        for p in table.processes
        if p.kind in (ProcessKind.RAY_HEAD, ProcessKind.RAY_WORKER)
    ]
    demands = [(s.gpus_per_replica, s.max_replicas) for s in table.serve]
    clashes = []
    for s, n in zip(table.serve, replicas_that_fit(ray_gpus, demands), strict=True):
        if s.min_replicas < 1 or s.min_replicas > s.max_replicas or n < s.max_replicas:
            clashes.append(
                Clash(
                    kind=ClashKind.REPLICAS_EXCEED_GPUS,
                    host=table.hosts[0].host if table.hosts else "",
                    detail=(
                        f"{s.application}: replicas {s.min_replicas}..{s.max_replicas} of "
                        f"{s.gpus_per_replica} GPUs; the cluster holds {n} beside the others"
                    ),
                )
            )
    return clashes


# Words of a script that can be a container name.
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9]")
# Where a script connects to a host: a URL's host, the value of --address / --master-addr, or
# HOST:PORT (IPv6 in brackets or bare). A plain word is not a use: a host called `dev`, `host` or
# `docker` must not clash with `/dev/null`, `${1:-host}` or `docker run`.
_ADDRESS_RUN = re.compile(r"[0-9A-Za-z.:\[\]-]+")
_CONNECT_PREFIXES = ("//", "@", "--address=", "--address ", "--master-addr ")
_PORT_SUFFIX = re.compile(r":[0-9]+$")


def _addresses_used(text: str, known: Mapping[str, object]) -> set[str]:
    """Return the host names and addresses of `known` that the script connects to."""
    used = set()
    for line in text.splitlines():
        if ":" not in line and "@" not in line and "-addr" not in line:  # --address, --master-addr
            continue  # most lines connect nowhere: skip them cheaply
        for m in _ADDRESS_RUN.finditer(line):
            run = m.group()
            bare = _PORT_SUFFIX.sub("", run) if ":" in run else run
            if bare == run and not line.endswith(_CONNECT_PREFIXES, 0, m.start()):
                continue  # neither HOST:PORT nor after a URL scheme or an address flag
            for ident in (run, bare):
                ident = ident.removeprefix("[").removesuffix("]")
                if ident in known:
                    used.add(ident)
                    break
    return used


def script_clashes(table: AllocationTable, scripts: Mapping[str, str]) -> list[Clash]:
    """Return the scripts that name another host's container or connect to another host.

    `scripts` maps a host to the text of every script it runs. A host may connect to the peer
    it joins (the mp master or the Ray head), to no other host.
    """
    container_of: dict[str, str] = {}  # container name -> its host
    names_of: dict[str, set[str]] = {}  # host name or address -> the hosts it names
    for h in table.hosts:
        for p in h.processes:
            if p.container:
                container_of[p.container] = h.host
        for ident in (h.host, h.address):
            names_of.setdefault(ident, set()).add(h.host)
    clashes = []
    for h in table.hosts:
        text = scripts.get(h.host, "")
        allowed = {h.host, h.address} | {p.peer for p in h.processes if p.peer}
        for word in sorted(set(_WORD.findall(text))):
            if container_of.get(word, h.host) != h.host:
                clashes.append(Clash(kind=ClashKind.FOREIGN_CONTAINER, host=h.host, detail=word))
        for ident in sorted(_addresses_used(text, names_of)):
            if ident not in allowed and h.host not in names_of[ident]:
                clashes.append(Clash(kind=ClashKind.FOREIGN_ADDRESS, host=h.host, detail=ident))
    return clashes
