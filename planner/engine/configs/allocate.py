"""Turn a layout and a route into the allocation table: every process, its GPUs, ports, ranks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from catalog.identifiers import host_port
from planner.engine.configs.allocation import (
    AllocationTable,
    HostAllocation,
    Process,
    ProcessKind,
    ServeReplicas,
    replicas_that_fit,
)
from planner.engine.configs.layout import BundleLayout, ServeApp, Variant
from planner.engine.configs.serve import SERVE_CONFIG_FILE
from planner.engine.configs.vllm import model_ref, serve_args
from planner.engine.result import Backend, Route
from planner.engine.spec import Node, PlanSpec

API_PORT = 8000  # each replica's OpenAI API; the next replica on a host takes the next port
MASTER_PORT = 29501  # mp multi-node rendezvous on node-rank 0
RAY_GCS_PORT = 6379
RAY_DASHBOARD_PORT = 8265  # `serve deploy` talks to it on the head
SERVE_HTTP_PORT = 8000  # the Serve proxy on every Ray node (proxy_location: EveryNode)
NGINX_PORT = 80
GPU_EXPORTER_PORT = 9400  # dcgm-exporter's default listen address (:9400)
HEAD_OBJECT_STORE_BYTES = 8 * 1024**3  # keep the head light: cap its object store at 8 GiB
DASHBOARD_URL = f"http://127.0.0.1:{RAY_DASHBOARD_PORT}"


class UnknownHost(ValueError):
    """The layout names a host that the plan's hardware does not have."""


def container_name(role: str, host: str) -> str:
    """Return the docker --name of a process: unique per host and naming it."""
    return f"serveplan-{role}-{host}"


def _devices(start: int, count: int) -> tuple[int, ...]:
    return tuple(range(start, start + count))


def _cuda_env(gpus: Sequence[int]) -> tuple[tuple[str, str], ...]:
    return (("CUDA_VISIBLE_DEVICES", ",".join(map(str, gpus))),)


def vllm_process(
    host: str,
    name: str,
    serve: Sequence[str],
    *,
    gpus: tuple[int, ...],
    port: int,
    replica: int,
    gpu_share: float = 1.0,
) -> Process:
    """Return one single-node `vllm serve` (`serve` is the model and its flags) on fixed GPUs,
    claiming `gpu_share` of each (below 1 when it shares them with another server)."""
    return Process(
        host=host,
        name=name,
        kind=ProcessKind.VLLM,
        gpus=gpus,
        gpu_share=gpu_share,
        ports=(port,),
        replica=replica,
        container=container_name(name, host),
        argv=("vllm", "serve", *serve, "--host", "0.0.0.0", "--port", str(port)),
        env=_cuda_env(gpus),
    )


def allocate(
    spec: PlanSpec, layout: BundleLayout, nodes: Sequence[Node], variant: Variant
) -> AllocationTable:
    """Return the allocation table of one model deployed as `variant` (routes single, A, B)."""
    if variant.route == Route.C:
        raise ValueError("Route C is allocated by allocate_serve")
    by_name = nodes_by_name(layout.host_names, nodes)
    procs: dict[str, list[Process]] = {h: [] for h in layout.host_names}
    model = model_ref(spec, layout.weight_dtype)
    common = serve_args(spec, layout)
    if variant.backend == Backend.RAY:
        head = layout.hosts[0][0]
        _ray_nodes(procs, by_name, head, {h: layout.gpus_per_node for h in procs})
    slot_of: dict[str, int] = {}
    for r, hosts in enumerate(layout.hosts):
        first = hosts[0]
        slot = slot_of.get(first, 0)
        slot_of[first] = slot + 1
        port = API_PORT + slot
        if variant.backend == Backend.RAY:
            argv = ("vllm", "serve", model, *common, "--distributed-executor-backend", "ray")
            procs[first].append(
                Process(
                    host=first,
                    name=f"vllm-r{r}",
                    kind=ProcessKind.VLLM,
                    ports=(port,),
                    replica=r,
                    nnodes=len(hosts),
                    argv=(*argv, "--host", "0.0.0.0", "--port", str(port)),
                )
            )
            continue
        if len(hosts) == 1:
            gpus = _devices(slot * layout.gpus_per_replica, layout.gpus_per_replica)
            serve = (model, *common)
            procs[first].append(
                vllm_process(first, f"vllm-r{r}", serve, gpus=gpus, port=port, replica=r)
            )
            continue
        master = by_name[first].reach
        for rank, host in enumerate(hosts):
            gpus = _devices(0, layout.gpus_per_node)
            argv: tuple[str, ...] = (
                "vllm",
                "serve",
                model,
                *common,
                "--distributed-executor-backend",
                "mp",
                "--nnodes",
                str(len(hosts)),
                "--node-rank",
                str(rank),
                "--master-addr",
                master,
                "--master-port",
                str(MASTER_PORT),
            )
            if rank == 0:
                argv += ("--host", "0.0.0.0", "--port", str(port))
            else:
                argv += ("--headless",)
            procs[host].append(
                Process(
                    host=host,
                    name=f"vllm-r{r}-rank{rank}",
                    kind=ProcessKind.VLLM if rank == 0 else ProcessKind.VLLM_HEADLESS,
                    gpus=gpus,
                    ports=(port, MASTER_PORT) if rank == 0 else (),
                    replica=r,
                    node_rank=rank,
                    nnodes=len(hosts),
                    peer=master,
                    container=container_name(f"vllm-r{r}-rank{rank}", host),
                    argv=argv,
                    env=_cuda_env(gpus),
                )
            )
    if len(layout.hosts) > 1:
        # One API server per replica: an Nginx beside each of them balances all replicas, so
        # losing one host loses neither the endpoint nor the other Nginx (README: pick a VIP,
        # DNS round robin or your own balancer in front of them).
        for balancer in dict.fromkeys(hosts[0] for hosts in layout.hosts):
            procs[balancer].append(service(balancer, ProcessKind.NGINX, NGINX_PORT, name="nginx"))
    gpu_exporters(procs)
    return AllocationTable(
        route=variant.route,
        backend=variant.backend,
        hosts=host_rows(procs, by_name),
    )


def allocate_serve(
    apps: Sequence[ServeApp], nodes: Sequence[Node], *, traffic_shape: str = "steady"
) -> AllocationTable:
    """Return the allocation table of a Route C pool: a Ray cluster and one Serve deploy.

    The cluster is every node that holds a planned replica; each node gives Ray all of its
    usable GPUs, so autoscaling may grow into them. Replica bounds never exceed what fits.
    """
    hosts = tuple(dict.fromkeys(h for app in apps for h in app.layout.host_names))
    by_name = nodes_by_name(hosts, nodes)
    procs: dict[str, list[Process]] = {h: [] for h in hosts}
    head = hosts[0]
    _ray_nodes(procs, by_name, head, {h: by_name[h].usable_gpus for h in hosts}, serve=True)
    procs[head].append(
        Process(
            host=head,
            name="serve-deploy",
            kind=ProcessKind.SERVE_DEPLOY,
            argv=("serve", "deploy", SERVE_CONFIG_FILE, "--address", DASHBOARD_URL),
        )
    )
    usable = [by_name[h].usable_gpus for h in hosts]
    gpu_exporters(procs)
    return AllocationTable(
        route=Route.C,
        backend=Backend.RAY,
        hosts=host_rows(procs, by_name),
        serve=serve_bounds(apps, usable, traffic_shape=traffic_shape),
    )


def serve_bounds(
    apps: Sequence[ServeApp], usable_gpus: Sequence[int], *, traffic_shape: str
) -> tuple[ServeReplicas, ...]:
    """Return each application's replica bounds so that all of them fit the nodes at once.

    min_replicas is the planned replica count (at least 1). Steady traffic keeps max equal to
    min; otherwise each application may grow, round-robin, while every maximum still packs.
    """
    lows = {a.name: max(1, a.layout.replicas) for a in apps}
    highs = dict(lows)
    wants = {a.name: lows[a.name] if traffic_shape == "steady" else 2 * lows[a.name] for a in apps}
    sizes = {a.name: a.gpus_per_replica for a in apps}

    def packs(bounds: Mapping[str, int]) -> bool:
        demands = [(sizes[name], count) for name, count in bounds.items()]
        return replicas_that_fit(usable_gpus, demands) == [count for _, count in demands]

    grew = packs(highs)
    while grew:
        grew = False
        for a in apps:
            if highs[a.name] < wants[a.name] and packs({**highs, a.name: highs[a.name] + 1}):
                highs[a.name] += 1
                grew = True
    return tuple(
        ServeReplicas(
            application=a.name,
            gpus_per_replica=sizes[a.name],
            min_replicas=lows[a.name],
            max_replicas=highs[a.name],
        )
        for a in apps
    )


def gpu_exporters(procs: dict[str, list[Process]]) -> None:
    """Add a GPU exporter on every host: monitoring reads each machine's GPUs from it."""
    for host, ps in procs.items():
        ps.append(
            service(
                host,
                ProcessKind.GPU_EXPORTER,
                GPU_EXPORTER_PORT,
                name="gpu-exporter",
                argv=("dcgm-exporter",),
            )
        )


def service(
    host: str, kind: ProcessKind, port: int, *, name: str, argv: tuple[str, ...] = ()
) -> Process:
    """Return a GPU-less service in its own container listening on one port (Nginx, ...)."""
    return Process(
        host=host,
        name=name,
        kind=kind,
        ports=(port,),
        container=container_name(name, host),
        argv=argv,
    )


def host_rows(
    procs: Mapping[str, Sequence[Process]], by_name: Mapping[str, Node]
) -> tuple[HostAllocation, ...]:
    return tuple(
        HostAllocation(
            host=h,
            address=by_name[h].reach,
            usable_gpus=by_name[h].usable_gpus,
            processes=tuple(ps),
        )
        for h, ps in procs.items()
    )


def nodes_by_name(hosts: Sequence[str], nodes: Sequence[Node]) -> dict[str, Node]:
    by_name = {n.hostname: n for n in nodes}
    missing = [h for h in hosts if h not in by_name]
    if missing or not hosts:
        raise UnknownHost(f"the layout names hosts the hardware lacks: {', '.join(missing)}")
    return by_name


def _ray_nodes(
    procs: dict[str, list[Process]],
    by_name: Mapping[str, Node],
    head: str,
    gpus_of: Mapping[str, int],
    *,
    serve: bool = False,
) -> None:
    """Add `ray start` on every host: the head first, each worker joining the head's address."""
    head_addr = by_name[head].reach
    for host in procs:
        gpus = _devices(0, gpus_of[host])
        if host == head:
            argv: tuple[str, ...] = (
                "ray",
                "start",
                "--head",
                f"--port={RAY_GCS_PORT}",
                f"--num-gpus={len(gpus)}",
                "--dashboard-host=0.0.0.0",
                f"--object-store-memory={HEAD_OBJECT_STORE_BYTES}",
            )
            ports: tuple[int, ...] = (RAY_GCS_PORT, RAY_DASHBOARD_PORT)
            kind = ProcessKind.RAY_HEAD
        else:
            argv = (
                "ray",
                "start",
                f"--address={host_port(head_addr, RAY_GCS_PORT)}",
                f"--num-gpus={len(gpus)}",
            )
            ports = ()
            kind = ProcessKind.RAY_WORKER
        if serve:
            ports += (SERVE_HTTP_PORT,)
        procs[host].append(
            Process(
                host=host,
                name="ray",
                kind=kind,
                gpus=gpus,
                ports=ports,
                peer=head_addr,
                container=container_name("ray", host),
                argv=argv,
                env=_cuda_env(gpus),
            )
        )
