"""A pool plan's Route A bundle: each model's servers on its planned GPUs, one LiteLLM proxy."""

from __future__ import annotations

import dataclasses
import tempfile
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings

from planner.engine.configs.allocation import ProcessKind
from planner.engine.pool import plan_pool, pool_spec_from_dict
from planner.engine.pool.bundles import pool_bundle
from planner.engine.result import Route
from tests.planner.engine.bundle_dryrun import dry_run
from tests.planner.engine.pool.pool_bundles import a100_pool, a100_pool_bundle
from tests.planner.engine.pool.test_pool_properties import pools


def _servers(bundle):
    return [p for p in bundle.table.processes if p.kind is ProcessKind.VLLM]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=pools())
def test_random_pools_claim_no_gpu_or_port_twice_and_serve_each_model_on_its_planned_gpus(raw):
    spec = pool_spec_from_dict(raw)
    result = plan_pool(spec)
    assume(result.placed)
    bundle = pool_bundle(spec, result.placed, Route.A)
    gpus = Counter((p.host, g) for p in bundle.table.processes for g in p.gpus)
    ports = Counter((p.host, port) for p in bundle.table.processes for port in p.ports)
    assert max(gpus.values()) == 1
    assert max(ports.values()) == 1
    for m in result.placed:
        mine = [p for p in _servers(bundle) if p.name.rsplit("-r", 1)[0] == f"vllm-{m.name}"]
        assert sorted((p.host, p.gpus) for p in mine) == sorted(
            (i.host, i.gpu_indices) for i in m.instances
        )
        for p in mine:
            assert p.env_map["CUDA_VISIBLE_DEVICES"] == ",".join(map(str, p.gpus))
            assert p.flag("--tensor-parallel-size") == str(m.tp)
            assert float(p.flag("--gpu-memory-utilization")) == pytest.approx(
                m.gpu_memory_utilization, abs=1e-6
            )
    routes = yaml.safe_load(bundle.file("litellm.yaml"))["model_list"]
    assert Counter(r["model_name"] for r in routes) == Counter(
        p.flag("--served-model-name") for p in _servers(bundle)
    )


def test_the_a100_pool_routes_every_model_through_one_litellm_endpoint():
    bundle = a100_pool_bundle()
    routers = [p for p in bundle.table.processes if p.kind is ProcessKind.ROUTER]
    assert len(routers) == 1
    assert routers[0].ports == (4000,)
    config = yaml.safe_load(bundle.file("litellm.yaml"))
    by_address = {h.address: h for h in bundle.table.hosts}
    for entry in config["model_list"]:
        params = entry["litellm_params"]
        assert params["model"] == "hosted_vllm/" + entry["model_name"]
        assert params["api_key"] == "os.environ/VLLM_API_KEY"
        address, port = params["api_base"].removeprefix("http://").removesuffix("/v1").split(":")
        server = next(
            p
            for p in by_address[address].processes
            if p.kind is ProcessKind.VLLM and p.ports == (int(port),)
        )
        assert server.flag("--served-model-name") == entry["model_name"]
    assert config["general_settings"]["master_key"] == "os.environ/VLLM_API_KEY"
    assert {m.served_name for m in bundle.served} == {e["model_name"] for e in config["model_list"]}


def test_the_a100_pool_route_a_bundle_dry_runs_every_server_on_its_planned_gpus():
    bundle = a100_pool_bundle()
    with tempfile.TemporaryDirectory() as tmp:
        calls = dry_run(bundle, Path(tmp) / "run")
    started = sorted(
        (c.host, c.env["CUDA_VISIBLE_DEVICES"], c.flag("--port")) for c in calls if c.cmd == "vllm"
    )
    planned = sorted(
        (p.host, ",".join(map(str, p.gpus)), str(p.ports[0])) for p in _servers(bundle)
    )
    assert started == planned
    assert [c.flag("--config") for c in calls if c.cmd == "litellm"] == ["litellm.yaml"]
    check = bundle.file(f"check-{bundle.table.hosts[0].host}.sh")
    assert "/health/liveliness" in check
    smoke = bundle.file("smoke-test.sh")
    for m in bundle.served:
        assert m.served_name in smoke


def test_preflight_asks_every_gpu_for_the_strictest_models_memory_share():
    spec = pool_spec_from_dict(a100_pool())
    placed = list(plan_pool(spec).placed)
    placed[1] = dataclasses.replace(placed[1], gpu_memory_utilization=0.95)

    bundle = pool_bundle(spec, placed, Route.A)

    assert bundle.gpu_memory_utilization == pytest.approx(0.95)
    assert max(float(p.flag("--gpu-memory-utilization")) for p in _servers(bundle)) == 0.95
