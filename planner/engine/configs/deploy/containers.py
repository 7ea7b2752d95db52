"""Each process of the allocation table as the playbook starts it: a container (with a restart
policy) or a command inside the host's Ray container, plus what answers when it is healthy.

The same Process rows render the scripts (configs.scripts); this module only says how a
container engine runs them, as data the playbook's filter turns into one argv.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog.identifiers import host_port
from planner.engine.configs.allocate import RAY_DASHBOARD_PORT, SERVE_HTTP_PORT
from planner.engine.configs.allocation import HostAllocation, Process, ProcessKind, gpu_partners
from planner.engine.configs.scripts import (
    BUNDLE_MOUNT,
    GPU_EXPORTER_IMAGE,
    LITELLM_CONFIG_MOUNT,
    LITELLM_IMAGE,
    NGINX_IMAGE,
)
from planner.engine.configs.serve import SERVE_CONFIG_FILE
from planner.engine.configs.weights import ServedModel

# Start order across hosts: the Ray head, its workers, the servers, what runs on the cluster,
# the balancers. The playbook starts one phase on every host before the next.
PHASES = {
    ProcessKind.GPU_EXPORTER: 0,
    ProcessKind.RAY_HEAD: 1,
    ProcessKind.RAY_WORKER: 2,
    ProcessKind.VLLM: 3,
    ProcessKind.VLLM_HEADLESS: 3,
    ProcessKind.SERVE_DEPLOY: 4,
    ProcessKind.NGINX: 5,
    ProcessKind.ROUTER: 5,
}
_RAY = (ProcessKind.RAY_HEAD, ProcessKind.RAY_WORKER)


@dataclass(frozen=True, slots=True, kw_only=True)
class Volume:
    """A bind mount: from the host's models root, the bundle directory, or an absolute path."""

    root: str  # models | bundle | host
    source: str  # relative to the root (or absolute for `host`)
    target: str

    def to_dict(self) -> dict[str, str]:
        return {"root": self.root, "source": self.source, "target": self.target}


@dataclass(frozen=True, slots=True, kw_only=True)
class DeployProcess:
    """One process as the playbook runs it."""

    name: str
    kind: ProcessKind
    phase: int
    container: str = ""  # its own container; "" when it runs inside `exec_in`
    exec_in: str = ""  # the host's Ray container, for vLLM on Ray and `serve deploy`
    image: str = ""
    entrypoint: str = ""
    command: tuple[str, ...] = ()
    gpus: str = ""  # docker --gpus: '"device=0,1"', "all", or ""
    cap_add: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    volumes: tuple[Volume, ...] = ()
    ports: tuple[int, ...] = ()
    gpu_indices: tuple[int, ...] = ()  # what preflight checks as free
    health_urls: tuple[str, ...] = field(default=())
    # The health URL of the server that shares its GPU and starts first ("" when none): vLLM
    # counts memory another process takes during its start-up profile against its own budget.
    waits_for: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": str(self.kind),
            "phase": self.phase,
            "container": self.container,
            "exec_in": self.exec_in,
            "image": self.image,
            "entrypoint": self.entrypoint,
            "command": list(self.command),
            "gpus": self.gpus,
            "cap_add": list(self.cap_add),
            "env": dict(self.env),
            "volumes": [v.to_dict() for v in self.volumes],
            "ports": list(self.ports),
            "gpu_indices": list(self.gpu_indices),
            "health_urls": list(self.health_urls),
            "waits_for": self.waits_for,
        }


def _model_volume(m: ServedModel) -> Volume:
    if m.path == f"/models/{m.dir_name}":
        return Volume(root="models", source=m.dir_name, target=m.path)
    return Volume(root="host", source=m.path, target=m.path)


def _ray_container(host: HostAllocation) -> str:
    return next((p.container for p in host.processes if p.kind in _RAY), "")


def _url(host: HostAllocation, port: int, path: str) -> str:
    return f"http://{host_port(host.address, port)}{path}"


def deploy_process(
    p: Process, host: HostAllocation, *, image: str, served: Sequence[ServedModel], serve_app: bool
) -> DeployProcess:
    """Return how the playbook runs one process of the table."""
    base: dict[str, Any] = {
        "name": p.name,
        "kind": p.kind,
        "phase": PHASES[p.kind],
        "ports": p.ports,
        "gpu_indices": p.gpus,
    }
    # docker's --gpus takes CSV options: the device list needs its own quotes inside the word.
    gpus = f'"device={",".join(map(str, p.gpus))}"' if p.gpus else ""
    models = tuple(_model_volume(m) for m in served)
    if p.kind in _RAY:
        health = ()
        if p.kind is ProcessKind.RAY_HEAD:
            health = (_url(host, RAY_DASHBOARD_PORT, "/api/version"),)
        app = (Volume(root="bundle", source="", target=BUNDLE_MOUNT),) if serve_app else ()
        if serve_app and SERVE_HTTP_PORT in p.ports:
            health += (_url(host, SERVE_HTTP_PORT, "/-/healthz"),)
        return DeployProcess(
            **base,
            container=p.container,
            image=image,
            entrypoint="ray",
            command=(*p.argv[1:], "--block"),
            gpus=gpus,
            env=(("PYTHONPATH", BUNDLE_MOUNT),) if serve_app else (),
            volumes=models + app,
            health_urls=health,
        )
    if p.kind in (ProcessKind.VLLM, ProcessKind.VLLM_HEADLESS):
        health = (_url(host, p.ports[0], "/health"),) if p.kind is ProcessKind.VLLM else ()
        if not p.gpus:  # Ray backend: beside the host's Ray node, which gives it the GPUs
            return DeployProcess(
                **base, exec_in=_ray_container(host), command=p.argv, health_urls=health
            )
        model = [v for v in models if v.target == p.argv[2]]
        partner = gpu_partners(host).get(p.name)
        return DeployProcess(
            **base,
            waits_for=_url(host, partner.ports[0], "/health") if partner else "",
            container=p.container,
            image=image,
            entrypoint="vllm",
            command=p.argv[1:],
            gpus=gpus,
            volumes=tuple(model),
            health_urls=health,
        )
    if p.kind is ProcessKind.SERVE_DEPLOY:
        inside = tuple(f"{BUNDLE_MOUNT}/{a}" if a == SERVE_CONFIG_FILE else a for a in p.argv)
        return DeployProcess(**base, exec_in=_ray_container(host), command=inside)
    if p.kind is ProcessKind.NGINX:
        conf = Volume(root="bundle", source="nginx.conf", target="/etc/nginx/conf.d/default.conf")
        return DeployProcess(
            **base,
            container=p.container,
            image=NGINX_IMAGE,
            volumes=(conf,),
            health_urls=(_url(host, p.ports[0], "/health"),),
        )
    if p.kind is ProcessKind.ROUTER:
        conf = Volume(root="bundle", source=p.argv[2], target=LITELLM_CONFIG_MOUNT)
        return DeployProcess(
            **base,
            container=p.container,
            image=LITELLM_IMAGE,
            command=tuple(LITELLM_CONFIG_MOUNT if a == p.argv[2] else a for a in p.argv[1:]),
            volumes=(conf,),
            health_urls=(_url(host, p.ports[0], "/health/liveliness"),),
        )
    if p.kind is ProcessKind.GPU_EXPORTER:
        return DeployProcess(
            **base,
            container=p.container,
            image=GPU_EXPORTER_IMAGE,
            gpus="all",
            cap_add=("SYS_ADMIN",),
            health_urls=(_url(host, p.ports[0], "/metrics"),),
        )
    raise ValueError(f"no container for {p.kind}")
