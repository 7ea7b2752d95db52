"""Ray's per-GPU series, against the one real GPU-node payload in public (a fragment) and the
simulator. The fixture and where it comes from: tests/monitoring/fixtures/ray/SOURCES.md.

The real fragment has the labels of every per-GPU series but readings only for
`ray_node_gpus_available`; the utilisation and memory payloads below are its sample lines with
the metric name and value changed and the label text kept byte for byte.
"""

from __future__ import annotations

import time

from monitoring.scrape import from_text
from monitoring.scrape import ray as ray_extract
from monitoring.scrape.parse import parse
from monitoring.simulator.ray_sim import GPU_MEMORY_MIB, OTEL, SimRayCluster

from .conftest import fixture_text

REAL = "real_h200_worker_issue58228.txt"
NODE = "10.50.188.220:8080"
GPU_FAMILIES = frozenset({ray_extract.GPU_PRESENT, *ray_extract.GPU_GAUGES})


def real() -> str:
    return fixture_text("ray", REAL)


def real_lines() -> list[str]:
    return [line for line in real().splitlines() if line.startswith("ray_node_gpus_available{")]


def payload(values: dict[str, tuple[float, float]], *, ip: str = "10.50.188.220") -> str:
    """The real sample lines renamed: {metric: (GPU 0 value, GPU 1 value)}, on host `ip`."""
    out = [real()]
    for name, pair in values.items():
        out.append(f"# TYPE {name} gauge")
        for line, value in zip(real_lines(), pair, strict=True):
            labels = line[line.index("{") : line.index("}") + 1]
            out.append(f"{name}{labels.replace('10.50.188.220', ip)} {value}")
    return "\n".join(out) + "\n"


def by_id(result) -> dict[str, float]:
    return {s.series_id: s.value for s in result.samples}


def test_the_real_fragment_parses_unchanged_into_two_named_gpus_and_no_readings():
    result = from_text(real(), "ray", ts=0, instance=NODE)

    assert result.ok
    assert result.warnings == []
    # Its only readings are presence: no utilisation or memory value is invented.
    assert not [s for s in result.samples if s.key.startswith("ray.node.gpu_")]
    # The device name has a space and is kept whole, per GPU index.
    assert result.info["gpus"] == {NODE: {"0": "NVIDIA H200", "1": "NVIDIA H200"}}
    assert result.info["sessions"] == ["session_2025-10-27_10-19-55_633290_1"]


def test_the_real_labels_give_per_gpu_utilisation_and_memory_in_mib():
    text = payload(
        {
            "ray_node_gpus_utilization": (97.0, 0.0),
            "ray_node_gram_used": (130_000.0, 512.0),
            "ray_node_gram_available": (13_771.0, 143_259.0),
        }
    )

    got = by_id(from_text(text, "ray", ts=0, instance=NODE))

    g0, g1 = f'{{gpu="0",node="{NODE}"}}', f'{{gpu="1",node="{NODE}"}}'
    assert got[f"ray.node.gpu_utilization_pct{g0}"] == 97.0
    assert got[f"ray.node.gpu_utilization_pct{g1}"] == 0.0  # idle is a reading, not a gap
    assert got[f"ray.node.gpu_memory_used_mib{g0}"] == 130_000.0  # MiB as Ray sends it
    total = got[f"ray.node.gpu_memory_used_mib{g1}"] + got[f"ray.node.gpu_memory_available_mib{g1}"]
    assert total == 143_771.0  # used + available = the GPU total, kept in MiB


def test_a_minus_one_reading_is_dropped_with_a_warning_but_the_gpu_is_still_listed():
    text = payload({"ray_node_gpus_utilization": (-1.0, 55.0)})

    result = from_text(text, "ray", ts=0, instance=NODE)

    got = by_id(result)
    assert f'ray.node.gpu_utilization_pct{{gpu="0",node="{NODE}"}}' not in got
    assert got[f'ray.node.gpu_utilization_pct{{gpu="1",node="{NODE}"}}'] == 55.0
    assert any("GPU 0" in w and "-1" in w for w in result.warnings)
    assert set(result.info["gpus"][NODE]) == {"0", "1"}  # so the page can show GPU 0 as a gap


def test_two_real_nodes_with_the_same_gpu_indices_stay_apart():
    a = ray_extract.extract(payload({"ray_node_gpus_utilization": (10.0, 20.0)}), 0, node=NODE)
    other = "10.50.188.221:8080"
    b = ray_extract.extract(
        payload({"ray_node_gpus_utilization": (30.0, 40.0)}, ip="10.50.188.221"), 0, node=other
    )

    merged = ray_extract.merge([a, b], 0)

    got = {s.series_id: s.value for s in merged.gauges}
    assert got[f'ray.node.gpu_utilization_pct{{gpu="1",node="{NODE}"}}'] == 20.0
    assert got[f'ray.node.gpu_utilization_pct{{gpu="1",node="{other}"}}'] == 40.0
    assert got["ray.cluster.gpus_reporting"] == 4
    assert set(merged.info["gpus"]) == {NODE, other}


def _label_names(text: str) -> dict[str, frozenset[str]]:
    return {
        name: frozenset(k for s in family.samples for k in s.labels)
        for name, family in parse(text, GPU_FAMILIES).items()
        if family.samples
    }


def test_the_simulator_gpu_series_have_the_real_names_labels_and_units():
    cluster = SimRayCluster(exporter_ports=(1, 2), dashboard_port=3)
    sim_text = cluster.exporter(2, time.time()).decode()
    sim = _label_names(sim_text)
    got = _label_names(real())

    # Ray 2.60 (which the simulator follows) adds the otel_scope labels to every node gauge;
    # apart from those, the simulator's GPU labels are the real ones, with no GpuUuid.
    assert set(sim) == GPU_FAMILIES
    for name in sim:
        assert sim[name] - set(OTEL) == got[ray_extract.GPU_PRESENT], name

    families = parse(sim_text, GPU_FAMILIES)
    util = [s.value for s in families["ray_node_gpus_utilization"].samples]
    assert all(v == -1 or 0 <= v <= 100 for v in util)
    for used, free in zip(
        families["ray_node_gram_used"].samples,
        families["ray_node_gram_available"].samples,
        strict=True,
    ):
        assert used.value + free.value == GPU_MEMORY_MIB  # MiB, like Ray
    assert {s.value for s in families[ray_extract.GPU_PRESENT].samples} == {1.0}


def test_the_simulator_and_the_real_labels_parse_into_the_same_series_keys_and_labels():
    cluster = SimRayCluster(exporter_ports=(1, 2), dashboard_port=3)
    sim = from_text(cluster.exporter(2, time.time()).decode(), "ray", ts=0, instance=NODE)
    real_result = from_text(
        payload({name: (50.0, 50.0) for name in ray_extract.GPU_GAUGES}),
        "ray",
        ts=0,
        instance=NODE,
    )

    def shape(result) -> set[tuple[str, tuple[str, ...]]]:
        return {
            (s.key, tuple(sorted(dict(s.labels))))
            for s in result.samples
            if s.key.startswith("ray.node.gpu_")
        }

    assert shape(real_result) == {
        ("ray.node.gpu_utilization_pct", ("gpu", "node")),
        ("ray.node.gpu_memory_used_mib", ("gpu", "node")),
        ("ray.node.gpu_memory_available_mib", ("gpu", "node")),
    }
    assert shape(sim) == shape(real_result)
    assert set(sim.info["gpus"][NODE]) == {"0", "1", "2", "3"}
