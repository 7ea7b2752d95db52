"""A deployment bundle: the allocation table, every file an operator copies, the steps in order.

`build_bundle` covers one model (routes single, A, B); `build_serve_bundle` a Route C pool of
one or more models. Both refuse (BundleClash) to emit a bundle whose table or scripts clash.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence

from catalog.identifiers import to_name
from planner.engine.configs.allocate import (
    SERVE_HTTP_PORT,
    ServeApp,
    allocate,
    allocate_serve,
)
from planner.engine.configs.allocation import (
    AllocationTable,
    BundleClash,
    Clash,
    ClashKind,
    Process,
    ProcessKind,
    script_clashes,
    table_clashes,
)
from planner.engine.configs.bundle_types import Bundle, BundleFile, HostNetwork, Step, StepKind
from planner.engine.configs.deploy.ops_scripts import (
    fetch_weights_script,
    register_script,
    smoke_test_script,
)
from planner.engine.configs.deploy.targets import monitoring_targets, smoke_endpoints
from planner.engine.configs.env import env_file
from planner.engine.configs.layout import BundleLayout, Variant
from planner.engine.configs.litellm import litellm_config
from planner.engine.configs.nginx import nginx_config
from planner.engine.configs.pool_alloc import LITELLM_CONFIG_FILE, PoolDeployment, allocate_pool
from planner.engine.configs.scripts import (
    ray_wait_lines,
    render_check,
    render_start,
    render_stop,
)
from planner.engine.configs.serve import SERVE_CONFIG_FILE, serve_config, serve_yaml
from planner.engine.configs.serve_app import SERVE_APP_MODULE, serve_app_module
from planner.engine.configs.weights import ServedModel, served_model
from planner.engine.result import Route
from planner.engine.spec import Node, PlanSpec

_LAUNCH_FIRST = {
    ProcessKind.RAY_HEAD: 0,
    ProcessKind.RAY_WORKER: 1,
    ProcessKind.VLLM: 2,
    ProcessKind.VLLM_HEADLESS: 3,
    ProcessKind.NGINX: 4,
    ProcessKind.ROUTER: 4,
}


def build_bundle(
    spec: PlanSpec, layout: BundleLayout, nodes: Sequence[Node], variant: Variant
) -> Bundle:
    """Return the bundle of one model deployed as `variant`; raise BundleClash when it clashes."""
    if variant.route == Route.C:
        name = spec.model_slug or to_name(spec.model_name)
        app = ServeApp(spec=spec, layout=layout, name=name, route_prefix="/")
        return build_serve_bundle([app], nodes, traffic_shape=spec.workload.traffic_shape)
    if len(layout.hosts) != layout.replicas:
        raise BundleClash([_short_layout(layout)])
    table = allocate(spec, layout, nodes, variant)
    files: list[BundleFile] = []
    api = [
        (table.host(p.host).address, p.ports[0])
        for p in table.processes
        if p.kind is ProcessKind.VLLM
    ]
    if any(p.kind is ProcessKind.NGINX for p in table.processes):
        files.append(BundleFile(name="nginx.conf", text=nginx_config(api)))
    return _assemble(
        table,
        files,
        nodes,
        specs=[spec],
        served=[served_model(spec, layout)],
        serve_app=False,
        layouts=[layout],
    )


def build_serve_bundle(
    apps: Sequence[ServeApp], nodes: Sequence[Node], *, traffic_shape: str = "steady"
) -> Bundle:
    """Return a Route C bundle: a Ray cluster, serve.yaml with one application per model, and
    the application module it imports."""
    names = [a.name for a in apps]
    if not apps or len(set(names)) != len(names):
        raise ValueError(f"Serve application names must be unique: {names}")
    table = allocate_serve(apps, nodes, traffic_shape=traffic_shape)
    config = serve_config(apps, table.serve, http_port=SERVE_HTTP_PORT)
    files = [
        BundleFile(name=SERVE_CONFIG_FILE, text=serve_yaml(config)),
        BundleFile(name=f"{SERVE_APP_MODULE}.py", text=serve_app_module()),
    ]
    return _assemble(
        table,
        files,
        nodes,
        specs=[a.spec for a in apps],
        served=[served_model(a.spec, a.layout, route_prefix=a.route_prefix) for a in apps],
        serve_app=True,
        layouts=[a.layout for a in apps],
        ray_shared_gpu_shares=[a.spec.gpu_memory_utilization for a in apps if a.gpu_share < 1],
    )


def build_pool_bundle(models: Sequence[PoolDeployment], nodes: Sequence[Node]) -> Bundle:
    """Return a pool's Route A bundle: every model's vLLM servers on the GPUs the pool plan gave
    them, and one LiteLLM proxy routing each request to its model by the `model` field."""
    table = allocate_pool(models, nodes)
    served = [served_model(m.spec, m.layout) for m in models]
    servers = [
        (p.flag("--served-model-name"), table.host(p.host).address, p.ports[0])
        for p in table.processes
        if p.kind is ProcessKind.VLLM
    ]
    files = [BundleFile(name=LITELLM_CONFIG_FILE, text=litellm_config(servers))]
    return _assemble(
        table,
        files,
        nodes,
        specs=[m.spec for m in models],
        served=served,
        serve_app=False,
        layouts=[m.layout for m in models],
    )


def _short_layout(layout: BundleLayout) -> Clash:
    return Clash(
        kind=ClashKind.REPLICAS_EXCEED_GPUS,
        host=layout.hosts[0][0] if layout.hosts else "",
        detail=(
            f"{layout.label} needs {layout.replicas} replica(s) of {layout.gpus_per_replica} "
            f"GPUs; the nodes hold {len(layout.hosts)}"
        ),
    )


def _assemble(
    table: AllocationTable,
    files: list[BundleFile],
    nodes: Sequence[Node],
    *,
    specs: Sequence[PlanSpec],
    served: Sequence[ServedModel],
    serve_app: bool,
    layouts: Sequence[BundleLayout] = (),
    ray_shared_gpu_shares: Sequence[float] = (),
) -> Bundle:
    """Return the bundle of `table` (BundleClash when it does not hold).

    `ray_shared_gpu_shares`: the memory shares of Serve replicas that ask Ray for half a GPU
    (Ray may pack any two of them on one GPU).
    """
    clashes = table_clashes(table)
    if clashes:
        raise BundleClash(clashes)
    image = specs[0].vllm_image
    used = [n for n in nodes if n.hostname in {h.host for h in table.hosts}]
    steps: list[Step] = []
    scripts: dict[str, str] = {}
    # The Ray head (or the hosts of node-rank 0) go first; workers after.
    ordered = sorted(
        table.hosts,
        key=lambda h: min((_LAUNCH_FIRST.get(p.kind, 9) for p in h.processes), default=9),
    )
    serve_steps: list[Step] = []
    model_paths = tuple(m.path for m in served)
    for h in ordered:
        launch = [p for p in h.processes if _is_launch(p.kind, p.gpus)]
        later = [p for p in h.processes if not _is_launch(p.kind, p.gpus)]
        name = f"launch-{h.host}.sh"
        text = render_start(
            h,
            launch,
            image=image,
            usage=f"Usage: ./{name} [--docker]; step 1 on this host, see README.md.",
            serve_app=serve_app,
            model_paths=model_paths,
        )
        files.append(BundleFile(name=name, text=text, executable=True))
        scripts[h.host] = text
        steps.append(Step(host=h.host, script=name, kind=StepKind.LAUNCH, processes=_names(launch)))
        if later:
            name = f"serve-{h.host}.sh"
            text = render_start(
                h,
                later,
                image=image,
                usage=f"Usage: ./{name} [--docker]; after every host's launch script.",
                serve_app=serve_app,
                extra_first=ray_wait_lines(h),
                model_paths=model_paths,
            )
            files.append(BundleFile(name=name, text=text, executable=True))
            scripts[h.host] += text
            serve_steps.append(
                Step(host=h.host, script=name, kind=StepKind.SERVE, processes=_names(later))
            )
    for h in table.hosts:
        for kind, render in (("check", render_check), ("stop", render_stop)):
            text = render(h)
            files.append(BundleFile(name=f"{kind}-{h.host}.sh", text=text, executable=True))
            scripts[h.host] += text
    steps += serve_steps
    steps += [
        Step(
            host=h.host,
            script=f"check-{h.host}.sh",
            kind=StepKind.CHECK,
            processes=_names(h.processes),
        )
        for h in ordered
    ]
    clashes = script_clashes(table, scripts)
    if clashes:
        raise BundleClash(clashes)
    files += [
        BundleFile(name=".env", text=env_file(used, multi_node=len(used) > 1)),
        BundleFile(name="allocation.json", text=json.dumps(table.to_dict(), indent=2) + "\n"),
        BundleFile(name="fetch-weights.sh", text=fetch_weights_script(served), executable=True),
        BundleFile(
            name="smoke-test.sh",
            text=smoke_test_script(smoke_endpoints(table, served)),
            executable=True,
        ),
        BundleFile(
            name="register.sh", text=register_script(monitoring_targets(table)), executable=True
        ),
    ]
    return Bundle(
        route=table.route,
        backend=table.backend,
        models=tuple(s.model_name for s in specs),
        labels=tuple(lay.label for lay in layouts),
        image=image,
        table=table,
        files=tuple(files),
        steps=tuple(steps),
        kv_tokens_per_replica=tuple(lay.kv_tokens_per_replica for lay in layouts),
        quantized_paths=tuple(m.path for m in served if not m.fetched),
        partly_free_hosts=tuple(n.hostname for n in used if n.usable_gpus < n.gpu_count),
        served=tuple(served),
        # Preflight asks every GPU for this share free: a pool's strictest model sets it, or
        # the two servers of a shared GPU together.
        gpu_memory_utilization=_strictest_gpu_share(table, specs, ray_shared_gpu_shares),
        networks=_networks(used) if len(used) > 1 else (),
    )


def _strictest_gpu_share(
    table: AllocationTable, specs: Sequence[PlanSpec], ray_shared: Sequence[float]
) -> float:
    """Return the largest share of one GPU's memory the bundle's servers take together."""
    strictest = max(s.gpu_memory_utilization for s in specs)
    taken: dict[tuple[str, int], float] = defaultdict(float)
    for p in table.processes:
        if p.gpu_share < 1:
            for g in p.gpus:
                taken[(p.host, g)] += p.gpu_share
    pair = sum(sorted(ray_shared)[-2:])  # the two largest replicas Ray may put on one GPU
    return round(max([strictest, pair, *taken.values()]), 3)


def _networks(nodes: Sequence[Node]) -> tuple[HostNetwork, ...]:
    return tuple(
        HostNetwork(host=n.hostname, interface=nic.name, speed_gbps=nic.speed_gbps)
        for n in nodes
        if (nic := n.data_nic) is not None
    )


def _is_launch(kind: ProcessKind, gpus: tuple[int, ...]) -> bool:
    """Return True for processes of step 1; vLLM on Ray and `serve deploy` wait for the cluster."""
    if kind is ProcessKind.SERVE_DEPLOY:
        return False
    return not (kind is ProcessKind.VLLM and not gpus)


def _names(processes: Sequence[Process]) -> tuple[str, ...]:
    return tuple(p.name for p in processes)
