"""The PromQL of read-only targets, per kind: every key the table offers builds, a selector's
values only ever appear quoted, and labelled series keep the poller's label names."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitoring.scrape import kinds
from monitoring.scrape.keys import for_kind
from monitoring.series import promql
from monitoring.series.readonly import kinds as readonly_kinds

QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
KINDS = list(kinds.REGISTRY)


def _all(kind: str, value: str) -> list[str]:
    selector = promql.parse_selector("{job=" + promql.quote(value) + "}")
    table = readonly_kinds.of_kind(kind).expressions
    return [readonly_kinds.expression(kind, key, selector, 60_000) for key in table]


def test_every_kind_of_the_scrape_registry_has_its_promql_and_no_other():
    assert list(readonly_kinds.REGISTRY) == KINDS


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_reads_its_stored_keys(kind):
    stored = {spec.key for spec in for_kind(kind)}
    offered = set(readonly_kinds.of_kind(kind).keys)
    assert offered - {"poll.up"} <= stored  # nothing a poll would not store
    assert len(offered) > 10


@pytest.mark.parametrize("kind", KINDS)
def test_expressions_are_balanced(kind):
    for expr in _all(kind, "vllm"):
        bare = QUOTED.sub("", expr)
        assert bare.count("(") == bare.count(")"), expr
        assert bare.count("{") == bare.count("}"), expr


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=30)
@given(value=st.text(max_size=30), kind=st.sampled_from(KINDS))
def test_a_hostile_label_value_stays_quoted(value, kind):
    """Outside quoted strings the expressions are the same whatever the selector's value."""
    hostile, plain = _all(kind, value), _all(kind, "x")
    assert [QUOTED.sub('""', e) for e in hostile] == [QUOTED.sub('""', e) for e in plain]
    assert all(promql.quote(value) in e for e in hostile)


def test_per_gpu_series_carry_gpu_and_mig_and_try_dcgm_then_nvidia_smi():
    selector = promql.parse_selector('{job="dcgm",instance="h:9400"}')
    expr = readonly_kinds.expression("gpu", "gpu.utilization_pct", selector, 60_000)
    assert expr.index("DCGM_FI_DEV_GPU_UTIL") < expr.index("nvidia_smi_utilization_gpu_ratio")
    assert "max by (gpu, mig)" in expr
    assert '"mig", "$1", "GPU_I_ID"' in expr  # DCGM's MIG instance id under our name
    assert '"gpu", "$1", "index"' in expr  # nvidia-smi's index, joined from nvidia_smi_gpu_info


def test_ray_node_series_name_the_node_by_its_exporter():
    selector = promql.parse_selector('{job="ray"}')
    expr = readonly_kinds.expression("ray", "ray.node.gpu_utilization_pct", selector, 60_000)
    assert "avg by (node, gpu)" in expr
    assert '"node", "$1", "instance"' in expr


def test_vllm_kv_capacity_comes_from_the_cache_config_labels():
    source = readonly_kinds.of_kind("vllm").from_labels
    engines = [{"num_gpu_blocks": "1000", "block_size": "16", "engine": str(i)} for i in (0, 1)]
    got = {s.key: s.value for s in source.derive(engines)}
    assert got["vllm.kv_cache_capacity_tokens"] == 2 * 1000 * 16
    assert "vllm.kv_cache_capacity_tokens" in readonly_kinds.of_kind("vllm").keys


def test_gpu_facts_come_from_dcgm_and_nvidia_smi_labels():
    facts = readonly_kinds.of_kind("gpu").facts
    got = facts.read(
        [
            {"gpu": "0", "UUID": "GPU-a", "modelName": "H100", "Hostname": "node-1", "pod": "p"},
            {"gpu": "2", "GPU_I_ID": "3", "UUID": "GPU-b", "GPU_I_PROFILE": "1g.10gb"},
            {"index": "1", "uuid": "GPU-c", "name": "NVIDIA A100"},  # nvidia_smi_gpu_info
            {"job": "dcgm"},  # no GPU named: nothing
        ]
    )
    assert got["hostname"] == "node-1"
    assert got["gpus"] == {
        "0": {"uuid": "GPU-a", "model": "H100", "pod": "p"},
        "2/3": {"uuid": "GPU-b", "mig_profile": "1g.10gb"},
        "1": {"uuid": "GPU-c", "model": "NVIDIA A100"},
    }
