"""Small models sharing GPUs: placement, predictions, bundles (the pool allows it: share_gpus)."""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.engine.configs.allocation import (
    AllocationTable,
    ClashKind,
    HostAllocation,
    Process,
    ProcessKind,
    table_clashes,
)
from planner.engine.configs.deploy.files import Registration, deploy_files
from planner.engine.messages import Code
from planner.engine.pool import plan_pool, pool_spec_from_dict
from planner.engine.pool.gpus import lay_out
from planner.engine.result import Backend, Route
from planner.engine.spec import SpecError
from tests.planner.engine.bundle_dryrun import dry_run
from tests.planner.engine.deploy_bundles import UnsafeLoader
from tests.planner.engine.pool.pool_bundles import shared_gpu_bundle, small_models_sharing
from tests.planner.engine.pool.test_pool_properties import pools


def _instances_per_gpu(result) -> dict[tuple[str, int], list[str]]:
    on: dict[tuple[str, int], list[str]] = defaultdict(list)
    for m in result.placed:
        for inst in m.instances:
            for gpu in inst.gpu_indices:
                on[(inst.host, gpu)].append(m.name)
    return on


def test_six_small_models_take_three_l40s_when_they_may_share_and_six_when_not():
    alone = plan_pool(pool_spec_from_dict(small_models_sharing(share_gpus=False)))
    shared = plan_pool(pool_spec_from_dict(small_models_sharing()))

    assert alone.gpus_used == 6
    assert not any(m.shares_gpus for m in alone.placed)
    assert shared.gpus_used == 3
    assert shared.spare_gpus == {"l40s-a": 5}
    for names in _instances_per_gpu(shared).values():
        assert len(names) == 2
        assert len(set(names)) == 2
    for m in shared.placed:
        assert m.shares_gpus
        assert m.tp == 1
        assert m.gpu_memory_utilization == pytest.approx(0.45)  # half of its own 0.9
        assert m.kv_tokens_per_replica > 0
        before = alone.model(m.name)
        assert m.kv_tokens_per_replica < before.kv_tokens_per_replica
        # Half the GPU's time: each step takes about twice as long as alone.
        assert m.prediction.tpot_p50_ms > 1.6 * before.prediction.tpot_p50_ms


def test_a_tight_itl_slo_keeps_each_model_on_a_gpu_of_its_own():
    alone = plan_pool(pool_spec_from_dict(small_models_sharing(share_gpus=False)))
    slowest = max(m.prediction.tpot_p50_ms for m in alone.placed)
    # Met alone with room to spare; missed at half the GPU's time.
    raw = small_models_sharing(itl_slo_ms=round(slowest * 1.3, 1))
    result = plan_pool(pool_spec_from_dict(raw))
    assert not any(m.shares_gpus for m in result.placed)
    assert all(m.slo_met for m in result.placed)
    assert result.gpus_used == 6


def test_a_model_too_large_for_half_a_gpu_never_shares():
    raw = small_models_sharing()
    raw["models"][0] = {"name": "big", "model": "qwen2.5-32b", "max_model_len": 4096}
    result = plan_pool(pool_spec_from_dict(raw))
    big = result.model("big")
    assert big is not None
    assert not big.shares_gpus
    assert big.gpu_memory_utilization == pytest.approx(0.9)


def test_a_model_left_out_for_want_of_gpus_is_told_that_sharing_would_place_it():
    raw = small_models_sharing(share_gpus=False)
    raw["hardware"]["nodes"][0]["gpu_count"] = 2
    raw["models"] = raw["models"][:3]
    without = plan_pool(pool_spec_from_dict(raw))
    (left_out,) = without.unplaced
    assert Code.POOL_HINT_SHARE in [h.code for h in left_out.hints]

    shared = plan_pool(pool_spec_from_dict({**raw, "share_gpus": True}))
    assert not shared.unplaced
    assert sum(m.shares_gpus for m in shared.placed) == 2  # two share a GPU, one has its own
    assert shared.gpus_used == 2


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"share_gpus": "yes"}, "share_gpus"),
        ({"models_0": {"share_gpus": True}}, "models[0].share_gpus"),
    ],
)
def test_share_gpus_is_a_yes_no_field_of_the_pool(raw, field):
    spec = small_models_sharing()
    spec.update({k: v for k, v in raw.items() if not k.startswith("models_")})
    if "models_0" in raw:
        spec["models"][0].update(raw["models_0"])
    with pytest.raises(SpecError) as exc:
        pool_spec_from_dict(spec)
    assert field in exc.value.errors


_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(raw=pools(), share=st.booleans())
def test_no_gpu_holds_more_than_its_memory_and_a_shared_gpu_holds_two_models(raw, share):
    spec = pool_spec_from_dict({**raw, "share_gpus": share})
    result = plan_pool(spec)
    by_name = {m.name: m for m in result.placed}
    for names in _instances_per_gpu(result).values():
        shares = [by_name[n].gpu_memory_utilization for n in names]
        assert sum(shares) <= 0.9 + 1e-9
        if len(names) > 1:
            assert share
            assert len(names) == 2
            assert len(set(names)) == 2
            assert all(by_name[n].shares_gpus for n in names)
    usable = {n.hostname: n.usable_gpus for n in spec.hardware.nodes}
    used = Counter(host for host, _ in _instances_per_gpu(result))
    for host, spare in result.spare_gpus.items():
        assert spare == usable[host] - used[host]


@_SETTINGS
@given(gpus=st.integers(1, 8), counts=st.lists(st.integers(1, 8), min_size=1, max_size=6))
def test_shared_instances_are_dealt_two_per_gpu_and_never_twice_one_model_on_a_gpu(gpus, counts):
    counts = [min(c, gpus) for c in counts]  # the placement: one model's instances <= GPUs
    sharing = [f"m{i}" for i, c in enumerate(counts) for _ in range(c)][: 2 * gpus]
    out = lay_out("h", gpus, [], sharing)
    on = defaultdict(list)
    for inst in out:
        (gpu,) = inst.gpu_indices
        on[gpu].append(inst.model)
    assert sorted(i.model for i in out) == sorted(sharing)
    assert all(len(models) <= 2 and len(set(models)) == len(models) for models in on.values())
    assert all(0 <= g < gpus for g in on)


# ------------------------------------------------------------------ bundles


def test_route_a_starts_the_second_server_of_a_gpu_once_the_first_serves():
    bundle = shared_gpu_bundle(Route.A)
    servers = [p for p in bundle.table.processes if p.kind is ProcessKind.VLLM]
    per_gpu = Counter(g for p in servers for g in p.gpus)
    assert set(per_gpu.values()) == {2}
    assert table_clashes(bundle.table) == []
    for p in servers:
        assert p.gpu_share == pytest.approx(0.45)
        assert p.flag("--gpu-memory-utilization") == "0.45"
    assert bundle.gpu_memory_utilization == pytest.approx(0.9)  # preflight: both shares free
    launch = bundle.file("launch-l40s-a.sh")
    first, second = (p for p in servers if p.gpus == (0,))
    wait = launch.index(f"start once {first.name} serves")
    assert launch.index(f"# {first.name};") < launch.index(f"# {second.name};") < wait
    assert wait < launch.index(f"--port {second.ports[0]}")
    assert f"http://127.0.0.1:{first.ports[0]}/health" in launch
    with tempfile.TemporaryDirectory() as tmp:
        calls = dry_run(bundle, Path(tmp) / "run")
    started = [c.env["CUDA_VISIBLE_DEVICES"] for c in calls if c.cmd == "vllm"]
    assert Counter(started) == Counter(",".join(map(str, p.gpus)) for p in servers)


def test_the_playbook_waits_for_each_shared_gpus_first_server():
    bundle = shared_gpu_bundle(Route.A)
    files = {f.name: f.text for f in deploy_files(bundle, Registration())}
    site = yaml.safe_load(files["site.yml"])
    services = next(play for play in site if "services" in play["tags"])
    names = [t["name"] for t in services["tasks"]]
    first = names.index("Start the first server of every GPU with a restart policy")
    assert names[first + 1] == "Wait until the first server of each shared GPU serves"
    assert names[first + 2] == "Start the second server of each shared GPU with a restart policy"
    group_vars = yaml.load(files["group_vars/all/allocation.yml"], Loader=UnsafeLoader)
    processes = group_vars["serveplan_hosts"]["l40s-a"]["processes"]
    waiting = [p for p in processes if p["waits_for"]]
    assert len(waiting) == 3  # one second server per shared GPU
    ports = {p["name"]: p["ports"][0] for p in processes if p["kind"] == "vllm"}
    for p in waiting:
        assert p["waits_for"].endswith("/health")
        assert int(p["waits_for"].rsplit(":", 1)[1].split("/")[0]) in ports.values()


def test_route_c_asks_ray_for_half_a_gpu_per_replica_with_half_the_memory():
    bundle = shared_gpu_bundle(Route.C)
    config = yaml.safe_load(bundle.file("serve.yaml"))
    for app in config["applications"]:
        (deployment,) = app["deployments"]
        assert deployment["ray_actor_options"]["num_gpus"] == 0.5
        args = app["args"]["vllm_args"]
        assert args[args.index("--gpu-memory-utilization") + 1] == "0.45"
    assert all(s.gpus_per_replica == 0.5 for s in bundle.table.serve)
    assert bundle.gpu_memory_utilization == pytest.approx(0.9)  # Ray may pack any two
    assert table_clashes(bundle.table) == []


def _table(*shares: float) -> AllocationTable:
    processes = tuple(
        Process(host="h", name=f"vllm-{i}", kind=ProcessKind.VLLM, gpus=(0,), gpu_share=s)
        for i, s in enumerate(shares)
    )
    host = HostAllocation(host="h", address="10.0.0.1", usable_gpus=1, processes=processes)
    return AllocationTable(route=Route.A, backend=Backend.MP, hosts=(host,))


@pytest.mark.parametrize(
    ("shares", "clash"),
    [((0.45, 0.45), False), ((0.5, 0.5), False), ((0.45, 0.6), True), ((1.0, 0.45), True)],
)
def test_a_gpu_claimed_by_two_servers_clashes_unless_their_shares_fit(shares, clash):
    kinds = [c.kind for c in table_clashes(_table(*shares))]
    assert (ClashKind.GPU_TWICE in kinds) is clash
