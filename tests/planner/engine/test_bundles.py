"""Deployment bundles run as generated: dry runs per scenario, the clash check, real tools."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace

import pytest
import yaml

from planner.engine import plan, spec_from_dict
from planner.engine.configs.allocation import (
    AllocationTable,
    BundleClash,
    ClashKind,
    HostAllocation,
    Process,
    ProcessKind,
    ServeReplicas,
    script_clashes,
    table_clashes,
)
from planner.engine.configs.bundle import build_bundle, build_serve_bundle
from planner.engine.configs.layout import BundleLayout, ServeApp, Variant, variants
from planner.engine.result import Route
from tests.planner.engine.bundle_dryrun import dry_run
from tests.planner.engine.bundle_expect import assert_dry_run_matches_plan
from tests.planner.engine.pool.pool_bundles import a100_pool_bundle, shared_gpu_bundle


def _nodes(n, gpus, gpu, *, pool_kind="dedicated", free=None, base_ip="10.0.0."):
    """Inline nodes with management addresses (the inventory's), a data NIC eth1."""
    return {
        "pool_kind": pool_kind,
        "nodes": [
            {
                "hostname": f"gpu{i + 1:02d}.dc1.example",
                "address": f"{base_ip}{11 + i}",
                "gpu": gpu,
                "gpu_count": gpus,
                "nics": [{"name": "eth1", "speed_gbps": 25, "role": "data"}],
                **({"free_gpus": free} if free is not None else {}),
            }
            for i in range(n)
        ],
    }


S1 = {
    "model": "llama-3.1-70b",
    "weight_dtype": "int8",
    "max_model_len": 8192,
    "workload": {"concurrency": 64, "avg_input_tokens": 1024, "avg_output_tokens": 512},
    "hardware": _nodes(2, 8, "a800-80g-sxm"),
}
S2A = {
    "model": "qwen2.5-32b",
    "max_model_len": 8192,
    "workload": {"concurrency": 32, "avg_input_tokens": 1200, "avg_output_tokens": 512},
    "hardware": _nodes(2, 4, "a100-80g-sxm"),
}
S2B = {
    "model": "qwen2.5-72b",
    "max_model_len": 65536,
    "rope_scaling_factor": 4,
    "workload": {"concurrency": 16, "avg_input_tokens": 1200},
    "hardware": _nodes(2, 4, "a100-80g-sxm"),
}
S3_PINNED = {**S2B, "workload": {"concurrency": 16}, "pinned_layout": {"tp": 4, "pp": 2}}
ROUTE_C = {
    "model": "qwen3-30b-a3b",
    "workload": {"concurrency": 64, "traffic_shape": "diurnal"},
    "operations": {"ray_in_use": True, "models_change_often": True},
    "hardware": _nodes(3, 8, "h100-sxm"),
}


def _recommended(spec_dict):
    spec = spec_from_dict(spec_dict)
    result = plan(spec)
    rec = result.recommendation
    layout = BundleLayout.from_candidate(result.best)
    variant = Variant(rec.route, rec.executor_backend)
    return spec, layout, variant, build_bundle(spec, layout, spec.hardware.nodes, variant)


def _dry_run_both_modes(tmp_path, spec, layout, variant, bundle):
    for docker in (False, True):
        calls = dry_run(bundle, tmp_path / ("docker" if docker else "host"), docker=docker)
        assert_dry_run_matches_plan(
            calls, bundle, layout, spec.hardware.nodes, variant, docker=docker
        )
    return calls


# ------------------------------------------------------------------ dry runs per scenario


def test_s1_route_a_replicas_behind_nginx(tmp_path):
    spec, layout, variant, bundle = _recommended(S1)
    assert variant == Variant("A", "mp")
    _dry_run_both_modes(tmp_path, spec, layout, variant, bundle)
    conf = bundle.file("nginx.conf")
    assert "server 10.0.0.11:8000" in conf
    assert "server 10.0.0.12:8000" in conf


def test_s2a_route_a_two_tp4_replicas(tmp_path):
    spec, layout, variant, bundle = _recommended(S2A)
    assert (variant.route, layout.tp) == ("A", 4)
    _dry_run_both_modes(tmp_path, spec, layout, variant, bundle)


def test_s2b_tp4_pp2_mp_across_two_nodes(tmp_path):
    spec, layout, variant, bundle = _recommended(S2B)
    assert variant == Variant("B", "mp")
    assert (layout.tp, layout.pp) == (4, 2)
    calls = _dry_run_both_modes(tmp_path, spec, layout, variant, bundle)
    files = bundle.file_map()
    assert "nginx.conf" not in files
    assert "serve.yaml" not in files
    assert not [c for c in calls if c.cmd == "ray"]


def test_s2b_tp4_pp2_with_ray_starts_ray_everywhere_and_one_vllm(tmp_path):
    spec, layout, _, _ = _recommended(S2B)
    variant = Variant("B", "ray")
    bundle = build_bundle(spec, layout, spec.hardware.nodes, variant)
    calls = _dry_run_both_modes(tmp_path, spec, layout, variant, bundle)
    assert [s.script for s in bundle.steps][:3] == [
        "launch-gpu01.dc1.example.sh",
        "launch-gpu02.dc1.example.sh",
        "serve-gpu01.dc1.example.sh",
    ]
    checks = [c.argv for c in calls if c.script.startswith("check-") and c.cmd == "docker"]
    assert checks == [("exec", "serveplan-ray-gpu01.dc1.example", "ray", "status")]


@pytest.mark.parametrize("pool_kind", ["dedicated", "shared"])
def test_s3_pinned_tp4_pp2_dedicated_mp_and_shared_ray(tmp_path, pool_kind):
    spec_dict = {**S3_PINNED, "hardware": _nodes(2, 4, "a100-80g-sxm", pool_kind=pool_kind)}
    spec, layout, variant, bundle = _recommended(spec_dict)
    assert variant == Variant("B", "mp" if pool_kind == "dedicated" else "ray")
    _dry_run_both_modes(tmp_path, spec, layout, variant, bundle)


def test_shared_pool_with_few_free_gpus_tells_the_operator_to_map_them(tmp_path):
    from planner.engine.configs.build import configs_of
    from planner.services.bundles import bundle_readme

    spec_dict = {**S2A, "hardware": _nodes(2, 8, "a100-80g-sxm", pool_kind="shared", free=4)}
    spec, layout, variant, bundle = _recommended(spec_dict)
    _dry_run_both_modes(tmp_path, spec, layout, variant, bundle)
    assert bundle.partly_free_hosts == ("gpu01.dc1.example", "gpu02.dc1.example")
    assert "Shared pool" in bundle_readme(configs_of(bundle)["bundle"])


def test_ipv6_management_addresses_are_bracketed_where_a_port_follows(tmp_path):
    hardware = _nodes(2, 4, "a100-80g-sxm", base_ip="fd00::")
    spec, layout, variant, bundle = _recommended({**S2A, "hardware": hardware})
    assert variant == Variant("A", "mp")
    _dry_run_both_modes(tmp_path / "a", spec, layout, variant, bundle)
    assert "server [fd00::11]:8000 " in bundle.file("nginx.conf")
    assert nginx_t(tmp_path / "nginx", bundle.file("nginx.conf")).returncode == 0
    spec, layout, _, _ = _recommended({**S2B, "hardware": hardware})
    ray = Variant("B", "ray")
    bundle = build_bundle(spec, layout, spec.hardware.nodes, ray)
    _dry_run_both_modes(tmp_path / "b", spec, layout, ray, bundle)
    assert "--address=[fd00::11]:6379" in bundle.file("launch-gpu02.dc1.example.sh")


def test_pinned_layout_gets_its_own_bundle(tmp_path):
    spec_dict = {**S2A, "pinned_layout": {"tp": 2, "pp": 1, "replicas": 3}}
    spec = spec_from_dict(spec_dict)
    result = plan(spec)
    assert result.pinned is not None
    assert result.pinned.pinned
    layout = BundleLayout.from_candidate(result.pinned)
    assert (layout.tp, layout.replicas) == (2, 3)
    variant = Variant("A", "mp")
    bundle = build_bundle(spec, layout, spec.hardware.nodes, variant)
    _dry_run_both_modes(tmp_path, spec, layout, variant, bundle)
    table = bundle.table.to_dict()
    gpus = [
        p["cuda_visible_devices"]
        for h in table["hosts"]
        for p in h["processes"]
        if p["kind"] == "vllm"
    ]
    assert sorted(gpus) == ["0,1", "0,1", "2,3"]


def test_route_c_ray_cluster_and_serve_application_with_its_module(tmp_path):
    spec, layout, variant, bundle = _recommended(ROUTE_C)
    assert variant == Variant("C", "ray")
    calls = _dry_run_both_modes(tmp_path, spec, layout, variant, bundle)
    assert not [c for c in calls if c.cmd == "vllm"]
    config = yaml.safe_load(bundle.file("serve.yaml"))
    app = config["applications"][0]
    assert app["import_path"] == "serveplan_vllm_app:app"
    auto = app["deployments"][0]["autoscaling_config"]
    # diurnal traffic wants 2 × the replicas, but the cluster's nodes hold no more.
    assert auto["max_replicas"] * layout.gpus_per_replica <= 8 * len(bundle.table.hosts)


def _serve_app(spec, name, *, tp, hosts, concurrency):
    layout = BundleLayout(
        candidate_id=name,
        tp=tp,
        pp=1,
        replicas=len(hosts),
        nodes_per_replica=1,
        weight_dtype="bf16",
        hosts=hosts,
        max_concurrency_per_replica=concurrency,
    )
    return ServeApp(spec=spec, layout=layout, name=name, route_prefix=f"/{name}")


def test_route_c_two_models_in_one_pool(tmp_path):
    hw = _nodes(2, 8, "h100-sxm")
    first = spec_from_dict({**ROUTE_C, "hardware": hw})
    second = spec_from_dict(
        {
            "model": "qwen2.5-32b",
            "workload": {"concurrency": 8, "traffic_shape": "bursty"},
            "operations": {"multi_model_pool": True},
            "hardware": hw,
        }
    )
    hosts = (("gpu01.dc1.example",), ("gpu02.dc1.example",))
    apps = [
        _serve_app(first, "qwen3-30b-a3b", tp=4, hosts=hosts[:1], concurrency=40),
        _serve_app(second, "qwen2.5-32b", tp=2, hosts=hosts, concurrency=12),
    ]
    bundle = build_serve_bundle(apps, first.hardware.nodes, traffic_shape="bursty")
    config = yaml.safe_load(bundle.file("serve.yaml"))
    assert [a["route_prefix"] for a in config["applications"]] == [
        "/qwen3-30b-a3b",
        "/qwen2.5-32b",
    ]
    bounds = {s.application: s for s in bundle.table.serve}
    used = sum(s.max_replicas * s.gpus_per_replica for s in bounds.values())
    assert used <= 16
    assert bounds["qwen3-30b-a3b"].max_replicas == 2  # grew into the free GPUs
    assert bounds["qwen2.5-32b"].max_replicas == 4
    for docker in (False, True):
        calls = dry_run(bundle, tmp_path / str(docker), docker=docker)
        # Route C: the Ray cluster over both nodes, one serve deploy, no vllm serve.
        assert_dry_run_matches_plan(
            calls,
            bundle,
            apps[1].layout,
            first.hardware.nodes,
            Variant("C", "ray"),
            docker=docker,
        )


# ------------------------------------------------------------------ every candidate


@pytest.mark.parametrize("spec_dict", [S1, S2A, S2B, S3_PINNED, ROUTE_C], ids=lambda d: d["model"])
def test_every_placeable_candidate_and_variant_dry_runs(tmp_path, spec_dict):
    spec = spec_from_dict(spec_dict)
    result = plan(spec)
    candidates = [*result.candidates, *([result.pinned] if result.pinned else [])]
    built = 0
    for i, c in enumerate(candidates):
        layout = BundleLayout.from_candidate(c)
        for variant in variants(layout):
            if len(c.hosts) != c.replicas:
                with pytest.raises(BundleClash) as err:
                    build_bundle(spec, layout, spec.hardware.nodes, variant)
                assert err.value.clashes[0].kind is ClashKind.REPLICAS_EXCEED_GPUS
                continue
            bundle = build_bundle(spec, layout, spec.hardware.nodes, variant)
            calls = dry_run(bundle, tmp_path / f"{i}-{variant.key}")
            assert_dry_run_matches_plan(calls, bundle, layout, spec.hardware.nodes, variant)
            built += 1
    assert built >= 2


# ------------------------------------------------------------------ the clash check


def _host(name, *procs, gpus=8, address=""):
    return HostAllocation(host=name, address=address or name, usable_gpus=gpus, processes=procs)


def _proc(host, name, *, gpus=(), ports=(), container="", peer=""):
    return Process(
        host=host,
        name=name,
        kind=ProcessKind.VLLM,
        gpus=gpus,
        ports=ports,
        container=container,
        peer=peer,
    )


def test_clash_check_refuses_gpu_and_port_double_claims_and_missing_gpus():
    table = AllocationTable(
        route="A",
        backend="mp",
        hosts=(
            _host(
                "a",
                _proc("a", "r0", gpus=(0, 1, 2, 3), ports=(8000,)),
                _proc("a", "r1", gpus=(3, 4, 5, 6), ports=(8000,)),
                _proc("a", "r2", gpus=(8,), ports=(8001,)),
            ),
        ),
    )
    kinds = {c.kind for c in table_clashes(table)}
    assert kinds == {ClashKind.GPU_TWICE, ClashKind.PORT_TWICE, ClashKind.GPU_MISSING}


def test_clash_check_refuses_serve_replicas_beyond_the_gpus():
    ray = Process(host="a", name="ray", kind=ProcessKind.RAY_HEAD, gpus=tuple(range(8)))
    ray2 = replace(ray, host="b", kind=ProcessKind.RAY_WORKER)
    table = AllocationTable(
        route="C",
        backend="ray",
        hosts=(_host("a", ray), _host("b", ray2)),
        serve=(ServeReplicas(application="m", gpus_per_replica=8, min_replicas=2, max_replicas=4),),
    )
    clashes = table_clashes(table)
    assert [c.kind for c in clashes] == [ClashKind.REPLICAS_EXCEED_GPUS]
    ok = replace(table, serve=(replace(table.serve[0], max_replicas=2),))
    assert table_clashes(ok) == []


def test_clash_check_refuses_a_script_naming_another_hosts_container_or_address():
    table = AllocationTable(
        route="B",
        backend="mp",
        hosts=(
            _host("a", _proc("a", "r0", container="serveplan-ray-a"), address="10.0.0.1"),
            _host("b", _proc("b", "r0", peer="10.0.0.1"), address="10.0.0.2"),
            _host("c", _proc("c", "r0", container="serveplan-ray-c"), address="10.0.0.3"),
        ),
    )
    scripts = {
        "a": "ray start --head",
        "b": "vllm serve --master-addr 10.0.0.1\ndocker exec serveplan-ray-a vllm serve",
        "c": "curl http://10.0.0.2:8000/health",
    }
    found = {(c.host, c.kind, c.detail) for c in script_clashes(table, scripts)}
    assert found == {
        ("b", ClashKind.FOREIGN_CONTAINER, "serveplan-ray-a"),
        ("c", ClashKind.FOREIGN_ADDRESS, "10.0.0.2"),
    }


def test_clash_check_finds_every_way_a_script_connects_to_another_host():
    table = AllocationTable(
        route="B",
        backend="ray",
        hosts=(
            _host("a", _proc("a", "r0"), address="fd00::1"),
            _host("b", _proc("b", "r0"), address="gpu02.dc1.example"),
            _host("c", _proc("c", "r0"), address="10.0.0.3"),
        ),
    )
    scripts = {
        "a": "ray start --address=10.0.0.3:6379",
        "b": "curl -fsS http://[fd00::1]:8000/health",
        "c": "vllm serve m --master-addr gpu02.dc1.example --master-port 29501",
    }
    found = {(c.host, c.detail) for c in script_clashes(table, scripts)}
    assert found == {("a", "10.0.0.3"), ("b", "fd00::1"), ("c", "gpu02.dc1.example")}


@pytest.mark.parametrize(
    "names", [("dev", "host"), ("docker", "nginx"), ("ray", "head"), ("root", "logs")]
)
def test_host_names_that_are_also_script_words_still_get_every_bundle(names):
    """`/dev/null`, `${1:-host}`, `docker run`, `ray start --head` name no host."""
    hardware = _nodes(2, 4, "a100-80g-sxm")
    for node, name in zip(hardware["nodes"], names, strict=True):
        node["hostname"] = name
    spec = spec_from_dict({**S2B, "hardware": hardware})
    built = 0
    for c in plan(spec).candidates:
        if len(c.hosts) != c.replicas:
            continue
        layout = BundleLayout.from_candidate(c)
        for variant in variants(layout):
            build_bundle(spec, layout, spec.hardware.nodes, variant)
            built += 1
    assert built >= 4


def test_a_layout_with_fewer_placed_replicas_than_planned_is_refused():
    spec = spec_from_dict(S2A)
    layout = BundleLayout(
        candidate_id="x",
        tp=4,
        pp=1,
        replicas=3,
        nodes_per_replica=1,
        weight_dtype="bf16",
        hosts=(("gpu01.dc1.example",), ("gpu02.dc1.example",)),
    )
    with pytest.raises(BundleClash, match="needs 3 replica"):
        build_bundle(spec, layout, spec.hardware.nodes, Variant("A", "mp"))
    crowded = replace(layout, hosts=(*layout.hosts, ("gpu01.dc1.example",)))
    with pytest.raises(BundleClash) as err:
        build_bundle(spec, crowded, spec.hardware.nodes, Variant("A", "mp"))
    assert {c.kind for c in err.value.clashes} == {ClashKind.GPU_MISSING}


# ------------------------------------------------------------------ README and table


def test_readme_lists_the_table_steps_checks_stop_and_rollback():
    from planner.engine.configs.build import configs_of
    from planner.services.bundles import bundle_readme

    _, _, _, bundle = _recommended(S2B)
    readme = bundle_readme(configs_of(bundle)["bundle"])
    for text in (
        "CUDA_VISIBLE_DEVICES",
        "`0,1,2,3`",
        "`10.0.0.11`",
        "`./launch-gpu01.dc1.example.sh`",
        "`./check-gpu02.dc1.example.sh`",
        "`./stop-gpu01.dc1.example.sh`",
        "nvidia-smi",
        "curl /health",
        "ray status",
        "## Roll back",
    ):
        assert text in readme, text
    steps = [line for line in readme.splitlines() if line[:2] in {"2.", "3."}]
    assert "gpu01" in steps[0]  # node-rank 0 first
    assert "gpu02" in steps[1]


# ------------------------------------------------------------------ real tools


def _all_bundles():
    out = []
    for spec_dict in (S1, S2A, S2B, S3_PINNED, ROUTE_C):
        spec, layout, variant, bundle = _recommended(spec_dict)
        out.append(bundle)
        for other in variants(layout):
            if other != variant:
                out.append(build_bundle(spec, layout, spec.hardware.nodes, other))
    out.append(a100_pool_bundle())  # a pool's Route A: several models behind LiteLLM
    # Small models two to a GPU: the second server of a GPU waits for the first (Route A), or
    # Ray packs half-GPU replicas (Route C).
    out += [shared_gpu_bundle(Route.A), shared_gpu_bundle(Route.C)]
    return out


def test_every_script_passes_bash_n_and_shellcheck(tmp_path):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (apt-get install -y shellcheck)")
    for i, bundle in enumerate(_all_bundles()):
        for name, text in bundle.file_map().items():
            if not name.endswith(".sh"):
                continue
            path = tmp_path / f"{i}-{name}"
            path.write_text(text)
            syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
            assert syntax.returncode == 0, (name, syntax.stderr)
            lint = subprocess.run(
                [shellcheck, "--severity=style", str(path)], capture_output=True, text=True
            )
            assert lint.returncode == 0, (name, lint.stdout)


def nginx_t(tmp_path, conf: str) -> subprocess.CompletedProcess[str]:
    """Run `nginx -t` on a conf.d snippet inside a throw-away prefix."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not shutil.which(nginx):
        pytest.skip("nginx not installed (apt-get install -y nginx)")
    (tmp_path / "logs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "vllm.conf").write_text(conf.replace("listen 80;", "listen 18080;"))
    (tmp_path / "nginx.conf").write_text(
        "pid nginx.pid;\nerror_log logs/error.log;\nevents {}\n"
        "http {\n  access_log off;\n  include vllm.conf;\n}\n"
    )
    return subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )


def test_every_nginx_conf_passes_nginx_t_with_the_management_addresses(tmp_path):
    confs = [b.file("nginx.conf") for b in _all_bundles() if "nginx.conf" in b.file_map()]
    assert len(confs) >= 2
    for i, conf in enumerate(confs):
        proc = nginx_t(tmp_path / str(i), conf)
        assert proc.returncode == 0, proc.stderr


@pytest.mark.ray
def test_every_serve_config_validates_against_rays_schema():
    schema = pytest.importorskip("ray.serve.schema")
    serve_bundles = [b for b in _all_bundles() if b.route == "C"]
    assert len(serve_bundles) >= 3
    for bundle in serve_bundles:
        parsed = schema.ServeDeploySchema.model_validate(yaml.safe_load(bundle.file("serve.yaml")))
        for app, bounds in zip(parsed.applications, bundle.table.serve, strict=True):
            deployment = app.deployments[0]
            assert deployment.ray_actor_options.num_gpus == bounds.gpus_per_replica
            assert deployment.autoscaling_config["max_replicas"] == bounds.max_replicas


@pytest.mark.ray
def test_serve_cli_flags_exist_in_installed_ray():
    pytest.importorskip("ray.serve")
    import sys

    for command, flags in (("deploy", ("--address",)), ("shutdown", ("--address", "--yes"))):
        out = subprocess.run(
            [sys.executable, "-m", "ray.serve.scripts", command, "--help"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        assert all(flag in out for flag in flags), (command, out)


_FAKE_VLLM_MAIN = """
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

argv = sys.argv[1:]
port = int(argv[argv.index("--port") + 1])


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"" if self.path == "/health" else json.dumps(
            {"path": self.path, "argv": argv}
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


HTTPServer((argv[argv.index("--host") + 1], port), Handler).serve_forever()
"""


@pytest.mark.ray
def test_serve_application_module_starts_vllm_and_proxies_under_its_prefix(tmp_path, monkeypatch):
    """The shipped module, as serve.yaml calls it: a vLLM child with the planned flags on
    127.0.0.1, /health before serving, requests forwarded without the route prefix."""
    pytest.importorskip("ray.serve")
    import asyncio
    import json
    import sys

    from starlette.requests import Request

    _, _, _, bundle = _recommended(ROUTE_C)
    (tmp_path / "serveplan_vllm_app.py").write_text(bundle.file("serveplan_vllm_app.py"))
    cli = tmp_path / "fake" / "vllm" / "entrypoints" / "cli"
    cli.mkdir(parents=True)
    for package in (cli, cli.parent, cli.parent.parent):
        (package / "__init__.py").write_text("")
    (cli / "main.py").write_text(_FAKE_VLLM_MAIN)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "fake"))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("serveplan_vllm_app", None)
    module = __import__("serveplan_vllm_app")
    args = yaml.safe_load(bundle.file("serve.yaml"))["applications"][0]["args"]
    replica = module.VLLMDeployment.func_or_class(**args)  # the class Serve instantiates
    try:

        async def get(path: str, root: str) -> dict:
            async def receive() -> dict:
                return {"type": "http.request", "body": b"", "more_body": False}

            scope = {
                "type": "http",
                "method": "GET",
                "path": path,
                "root_path": root,
                "query_string": b"",
                "headers": [],
            }
            response = await replica(Request(scope, receive))
            body = b"".join([chunk async for chunk in response.body_iterator])
            await replica.check_health()
            return json.loads(body)

        seen = asyncio.run(get("/qwen3-30b-a3b/v1/models", "/qwen3-30b-a3b"))
    finally:
        replica.server.terminate()
        replica.server.wait(timeout=10)
    assert seen["path"] == "/v1/models"
    assert seen["argv"][:2] == ["serve", args["model"]]
    assert seen["argv"][2:-4] == args["vllm_args"]
    assert seen["argv"][-4:-2] == ["--host", "127.0.0.1"]
