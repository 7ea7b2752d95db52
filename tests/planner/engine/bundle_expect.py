"""What a dry run must show for a layout, derived from the plan (hosts, TP × PP, replicas)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import yaml

from planner.engine.configs.bundle import Bundle
from planner.engine.configs.layout import BundleLayout, Variant
from planner.engine.spec import Node
from tests.planner.engine.bundle_dryrun import Call


def _gpus(call: Call) -> list[int]:
    raw = call.env.get("CUDA_VISIBLE_DEVICES", "")
    return [int(x) for x in raw.split(",")] if raw else []


def _docker_gpus(argv: Sequence[str]) -> list[int]:
    value = argv[list(argv).index("--gpus") + 1]
    match = re.fullmatch(r'"device=([0-9,]+)"', value)
    assert match, value
    return [int(x) for x in match.group(1).split(",")]


def _after_image(argv: Sequence[str], image: str) -> list[str]:
    i = list(argv).index(image)
    return list(argv[i + 1 :])


def normalise_docker(calls: Sequence[Call], image: str) -> list[Call]:
    """Return docker-mode calls as the commands the containers run, with their GPUs as env."""
    out = []
    for c in calls:
        if c.cmd != "docker":
            out.append(c)
            continue
        verb = c.argv[0]
        if verb == "run" and image in c.argv:
            entry = c.argv[list(c.argv).index("--entrypoint") + 1]
            env = {"CUDA_VISIBLE_DEVICES": ",".join(map(str, _docker_gpus(c.argv)))}
            name = c.argv[list(c.argv).index("--name") + 1]
            assert name.endswith("-" + c.host), (name, c.host)  # its own host's container
            argv = _after_image(c.argv, image)
            if entry == "ray" and argv[-1] == "--block":
                argv = argv[:-1]
            out.append(Call(c.host, entry, tuple(argv), env, c.script))
        elif verb == "exec":
            args = [a for a in c.argv[1:] if a != "-d"]
            container, inner = args[0], args[1:]
            assert container.endswith("-" + c.host), (container, c.host)
            out.append(Call(c.host, inner[0], tuple(inner[1:]), {}, c.script))
        else:
            out.append(c)
    return out


def assert_dry_run_matches_plan(
    calls: Sequence[Call],
    bundle: Bundle,
    layout: BundleLayout,
    nodes: Sequence[Node],
    variant: Variant,
    *,
    docker: bool = False,
) -> None:
    """Assert that the recorded processes get exactly the plan's GPUs, ports, ranks, addresses."""
    by_name = {n.hostname: n for n in nodes}
    address = {h: (by_name[h].address or h) for h in by_name}
    if docker:
        calls = normalise_docker(calls, bundle.image)
    launched = [c for c in calls if not c.script.startswith(("check-", "stop-"))]
    vllm = [c for c in launched if c.cmd == "vllm" and c.argv[:1] == ("serve",)]
    ray = [c for c in launched if c.cmd == "ray" and c.argv[:1] == ("start",)]
    hosts = list(dict.fromkeys(h for hs in layout.hosts for h in hs))
    assert {c.host for c in launched} <= set(hosts)

    if variant.route == "C":
        _assert_route_c(launched, vllm, ray, bundle, layout, hosts, address, docker=docker)
        return
    for c in vllm:
        assert c.flag("--tensor-parallel-size") == str(layout.tp)
        assert c.flag("--pipeline-parallel-size") == str(layout.pp)
    if variant.backend == "ray":
        _assert_ray_cluster(ray, hosts, address, gpus_each=layout.gpus_per_node)
        assert len(vllm) == layout.replicas
        for r, replica_hosts in enumerate(layout.hosts):
            mine = [c for c in vllm if c.host == replica_hosts[0]]
            assert mine, f"replica {r} has no vllm serve on {replica_hosts[0]}"
        for c in vllm:
            assert c.flag("--distributed-executor-backend") == "ray"
            assert "--nnodes" not in c.argv
    elif layout.nodes_per_replica > 1:
        assert not ray
        assert len(vllm) == layout.replicas * layout.nodes_per_replica
        for r, replica_hosts in enumerate(layout.hosts):
            master = address[replica_hosts[0]]
            for rank, host in enumerate(replica_hosts):
                mine = [
                    c
                    for c in vllm
                    if c.host == host
                    and c.flag("--master-addr") == master
                    and c.flag("--node-rank") == str(rank)
                ]
                assert len(mine) == 1, (r, rank, host)
                c = mine[0]
                assert c.flag("--nnodes") == str(len(replica_hosts))
                assert c.flag("--distributed-executor-backend") == "mp"
                assert _gpus(c) == list(range(layout.gpus_per_node))
                assert ("--headless" in c.argv) == (rank > 0)
                assert (c.flag("--port") is not None) == (rank == 0)
    else:
        assert not ray
        assert len(vllm) == layout.replicas
        per_host = Counter(hs[0] for hs in layout.hosts)
        for host, count in per_host.items():
            mine = [c for c in vllm if c.host == host]
            assert len(mine) == count
            claimed = [g for c in mine for g in _gpus(c)]
            assert sorted(claimed) == list(range(count * layout.gpus_per_replica))
            assert all(len(_gpus(c)) == layout.gpus_per_replica for c in mine)
            ports = [c.flag("--port") for c in mine]
            assert len(set(ports)) == count
    _assert_ports_unique(vllm)
    _assert_gpus_within_hosts(launched, by_name)
    _assert_nginx(launched, vllm, bundle, address, replicas=layout.replicas, docker=docker)


def _assert_ray_cluster(
    ray: Sequence[Call], hosts: Sequence[str], address: dict[str, str], *, gpus_each: int | None
) -> str:
    heads = [c for c in ray if "--head" in c.argv]
    assert len(heads) == 1
    head = heads[0].host
    assert sorted(c.host for c in ray) == sorted(hosts)
    for c in ray:
        gpus = _gpus(c)
        assert c.flag("--num-gpus") == str(len(gpus))
        if gpus_each is not None:
            assert gpus == list(range(gpus_each))
        if c.host != head:
            head_address = address[head]
            if ":" in head_address:  # IPv6: brackets keep the port apart, as Ray writes it
                head_address = f"[{head_address}]"
            assert c.flag("--address") == f"{head_address}:6379"
    return head


def _assert_route_c(launched, vllm, ray, bundle, layout, hosts, address, *, docker) -> None:
    assert not vllm, "Route C must not start vllm serve on the nodes"
    head = _assert_ray_cluster(ray, hosts, address, gpus_each=None)
    deploys = [c for c in launched if c.cmd == "serve" and c.argv[:1] == ("deploy",)]
    assert [c.host for c in deploys] == [head]
    assert deploys[0].argv[1].endswith("serve.yaml")
    if not docker:  # the application module is importable on every Ray node
        for c in ray:
            assert c.env["PYTHONPATH"].split(":")[0].endswith(f"hosts/{c.host}")
    files = bundle.file_map()
    assert "serveplan_vllm_app.py" in files
    config = yaml.safe_load(files["serve.yaml"])
    free = sorted((len(_gpus(c)) for c in ray), reverse=True)
    for app in sorted(
        config["applications"],
        key=lambda a: -a["deployments"][0]["ray_actor_options"]["num_gpus"],
    ):
        dep = app["deployments"][0]
        size = dep["ray_actor_options"]["num_gpus"]
        high = dep["autoscaling_config"]["max_replicas"]
        assert dep["autoscaling_config"]["min_replicas"] >= 1
        for i, f in enumerate(free):  # every application at its maximum, all at once
            take = min(f // size, high)
            free[i] -= take * size
            high -= take
        assert high == 0, f"{app['name']}: max_replicas exceeds the cluster's GPUs"
    sizes = {a["args"]["vllm_args"][1] for a in config["applications"]}
    assert str(layout.tp) in sizes


def _assert_ports_unique(vllm: Sequence[Call]) -> None:
    seen = Counter((c.host, c.flag("--port")) for c in vllm if c.flag("--port"))
    assert all(n == 1 for n in seen.values()), seen


def _assert_gpus_within_hosts(launched: Sequence[Call], by_name: dict[str, Node]) -> None:
    claims: Counter[tuple[str, int]] = Counter()
    for c in launched:
        for g in _gpus(c):
            claims[(c.host, g)] += 1
            assert g < by_name[c.host].usable_gpus, (c.host, g)
    assert all(n == 1 for n in claims.values()), claims


def _assert_nginx(launched, vllm, bundle, address, *, replicas: int, docker: bool) -> None:
    files = bundle.file_map()
    if replicas == 1:
        assert "nginx.conf" not in files
        return
    upstream = {
        (host.removeprefix("[").removesuffix("]"), port)
        for host, port in re.findall(r"server (\S+):(\d+) max_fails", files["nginx.conf"])
    }
    api = {(address[c.host], c.flag("--port")) for c in vllm if c.flag("--port")}
    assert upstream == api
    # An Nginx beside every replica's API server (issue 29: one balancer was a single point
    # of failure), each on its own host.
    balancers = {c.host for c in vllm if c.flag("--port")}
    if docker:
        runs = [c for c in launched if c.cmd == "docker" and "nginx:1.27" in c.argv]
        assert sorted(c.host for c in runs) == sorted(balancers)
        assert all("unless-stopped" in c.argv for c in runs)
    else:
        nginx = [(c.host, c.argv) for c in launched if c.cmd == "nginx"]
        assert sorted(nginx) == sorted(
            (h, argv) for h in balancers for argv in (("-t",), ("-s", "reload"))
        )
