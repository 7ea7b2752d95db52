"""Properties of pool plans over random pools and model sets (no database)."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.engine.pool import plan_pool, pool_spec_from_dict
from planner.engine.pool.result import PoolResult

MODELS = ("qwen3-8b", "llama-3.1-8b", "mistral-7b", "qwen2.5-32b", "llama-3.1-70b", "qwen3-30b-a3b")
GPUS = ("a100-80g-sxm", "h100-sxm", "l40s")


@st.composite
def pools(draw):
    nodes = [
        {
            "hostname": f"h{i}",
            "gpu": draw(st.sampled_from(GPUS)),
            "gpu_count": draw(st.sampled_from((2, 4, 8))),
            "intra_link": draw(st.sampled_from(("nvlink", "pcie"))),
        }
        for i in range(draw(st.integers(1, 3)))
    ]
    models = [
        {
            "name": f"m{i}",
            "model": draw(st.sampled_from(MODELS)),
            "max_model_len": draw(st.sampled_from((4096, 16384))),
            "priority": draw(st.integers(1, 10)),
            "workload": {
                "concurrency": draw(st.sampled_from((1, 8, 32))),
                "avg_input_tokens": 512,
                "avg_output_tokens": 128,
            },
        }
        for i in range(draw(st.integers(2, 4)))
    ]
    return {"hardware": {"nodes": nodes}, "models": models}


def _gpus_in_use(result: PoolResult) -> Counter:
    return Counter(
        (inst.host, gpu) for m in result.placed for inst in m.instances for gpu in inst.gpu_indices
    )


def _value(result: PoolResult, names: set[str]) -> tuple[int, int]:
    """Return the priority placed and the priority meeting its SLO, over `names`."""
    placed = sum(m.priority for m in result.placed if m.name in names)
    met = sum(m.priority for m in result.placed if m.name in names and m.slo_met)
    return placed, met


_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(raw=pools())
def test_no_gpu_is_double_booked_and_every_model_is_accounted_for(raw):
    spec = pool_spec_from_dict(raw)
    result = plan_pool(spec)
    assert all(count == 1 for count in _gpus_in_use(result).values())
    names = [m.name for m in result.placed] + [m.name for m in result.unplaced]
    assert sorted(names) == sorted(m.name for m in spec.models)
    usable = {n.hostname: n.usable_gpus for n in spec.hardware.nodes}
    for (host, gpu), _ in _gpus_in_use(result).items():
        assert 0 <= gpu < usable[host]
    in_use = Counter(host for host, _ in _gpus_in_use(result))
    for host, spare in result.spare_gpus.items():
        assert spare == usable[host] - in_use[host]


@_SETTINGS
@given(raw=pools())
def test_every_placed_model_fits_and_its_tp_groups_stay_in_aligned_blocks_of_one_node(raw):
    spec = pool_spec_from_dict(raw)
    gpu_of = {n.hostname: n.gpu.slug for n in spec.hardware.nodes}
    for m in plan_pool(spec).placed:
        assert m.kv_tokens_per_replica > 0
        assert m.prediction is not None
        assert len(m.instances) == m.replicas
        for inst in m.instances:
            assert gpu_of[inst.host] == m.gpu
            assert len(inst.gpu_indices) == m.tp
            first = inst.gpu_indices[0]
            assert inst.gpu_indices == tuple(range(first, first + m.tp))
            if m.tp & (m.tp - 1) == 0:  # a power of two never straddles an island boundary
                assert first % m.tp == 0


@_SETTINGS
@given(raw=pools(), data=st.data())
def test_removing_a_model_never_makes_the_others_worse(raw, data):
    spec = pool_spec_from_dict(raw)
    gone = data.draw(st.sampled_from([m.name for m in spec.models]))
    rest = {m.name for m in spec.models} - {gone}
    before = plan_pool(spec)
    after = plan_pool(spec.without(gone))
    placed_before, met_before = _value(before, rest)
    placed_after, met_after = _value(after, rest)
    # The placement is optimal: the others' placement before the removal is still possible.
    assert placed_after >= placed_before
    if placed_after == placed_before:
        assert met_after >= met_before


@_SETTINGS
@given(
    gpus=st.integers(1, 16),
    sizes=st.lists(st.sampled_from((1, 2, 3, 4, 6, 8)), min_size=1, max_size=8),
)
def test_any_instances_that_fit_a_node_get_distinct_gpus(gpus, sizes):
    from planner.engine.pool.gpus import lay_out

    wanted = []
    for i, tp in enumerate(sizes):  # what the placement allows: no more GPUs than the node has
        if sum(t for _, t in wanted) + tp <= gpus:
            wanted.append((f"m{i}", tp))
    out = lay_out("h", gpus, wanted)
    used = [g for inst in out for g in inst.gpu_indices]
    assert len(used) == len(set(used)) == sum(t for _, t in wanted)
    assert all(0 <= g < gpus for g in used)
