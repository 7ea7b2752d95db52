"""Every stored key is in the one table; the pure packages import no Django."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

from monitoring.scrape import from_text
from monitoring.scrape.keys import BY_KEY, SERIES, markdown_table
from monitoring.scrape.series import parse_series_id, series_id
from monitoring.simulator.dcgm_sim import DEMO_GPU_MACHINES, SimDcgm
from monitoring.simulator.ray_sim import SimRayCluster
from monitoring.simulator.vllm_sim import SimVllm, VllmProfile

from .conftest import FIXTURES, fixture_text

ROOT = Path(__file__).resolve().parents[3]


def emitted_keys() -> set[str]:
    keys: set[str] = set()
    files = [
        ("vllm", "v0_32_metrics_after.txt", "v0_32_metrics_later.txt"),
        ("vllm", "v0_6_synth_metrics_a.txt", "v0_6_synth_metrics_b.txt"),
        ("ray", "head_exporter_metrics_1.txt", "head_exporter_metrics_2.txt"),
    ]
    pairs = [(fixture_text(kind, a), fixture_text(kind, b), kind) for kind, a, b in files]
    sim = SimVllm(VllmProfile(name="k", model="m", base_rps=5, seed=1))
    cluster = SimRayCluster(exporter_ports=(1, 2), dashboard_port=3)
    now = time.time()
    pairs.append((sim.metrics(now).decode(), sim.metrics(now + 15).decode(), "vllm"))
    pairs.append((cluster.exporter(1, now).decode(), cluster.exporter(1, now + 15).decode(), "ray"))
    gpu_payloads = [fixture_text("gpu", f.name) for f in sorted((FIXTURES / "gpu").glob("*.txt"))]
    gpu_payloads = [t for t in gpu_payloads if "DCGM_FI_DEV_COMPUTE_PIDS" not in t]
    for profile in DEMO_GPU_MACHINES:
        gpu_payloads.append(SimDcgm(profile).metrics(now).decode())
    pairs.extend((text, text, "gpu") for text in gpu_payloads)
    for a, b, kind in pairs:
        first = from_text(a, kind, ts=0)
        second = from_text(b, kind, ts=15, previous=first.raw)
        keys |= {s.key for s in (*first.samples, *second.samples)}
    return keys


def test_every_emitted_key_is_documented_in_the_series_table():
    missing = emitted_keys() - set(BY_KEY)

    assert not missing


def test_nothing_outside_the_key_table_is_stored():
    from monitoring.scrape.run import known
    from monitoring.scrape.series import Sample

    warnings: list[str] = []
    kept = known([Sample("vllm.requests_running", (), 1.0), Sample("made.up", (), 2.0)], warnings)

    assert [s.key for s in kept] == ["vllm.requests_running"]
    assert warnings == ["keys outside the key table not stored: made.up"]


def test_each_kind_stores_its_own_keys_and_the_common_ones():
    from monitoring.scrape import kinds

    gpu_keys = {s.key for s in kinds.get("gpu").keys}

    assert "gpu.utilization_pct" in gpu_keys
    assert "scrape.duration_seconds" in gpu_keys
    assert not any(k.startswith(("vllm.", "ray.")) for k in gpu_keys)
    assert set(BY_KEY) == {s.key for k in kinds.KINDS for s in kinds.get(k).keys}


def test_series_table_has_unique_keys_with_units_or_kinds_in_their_names():
    assert len(BY_KEY) == len(SERIES)
    assert "| `vllm.ttft_seconds.p95` | quantile |" in markdown_table()


@pytest.mark.parametrize(
    "labels",
    [{}, {"gpu": "0", "node": "10.0.0.1:8080"}, {"route": 'a"b,c=d\\e', "x": "new\nline"}],
)
def test_series_id_round_trips(labels):
    sid = series_id("ray.node.gpu_utilization_pct", labels)

    assert parse_series_id(sid) == ("ray.node.gpu_utilization_pct", labels)


def test_series_id_sorts_labels():
    assert series_id("k", {"b": "1", "a": "2"}) == 'k{a="2",b="1"}'


@pytest.mark.parametrize("package", ["monitoring/scrape", "monitoring/simulator"])
def test_pure_packages_import_no_django(package):
    offenders = []
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path}: {n}" for n in names if n.split(".")[0] == "django"]

    assert offenders == []


def test_the_docs_show_the_current_key_table():
    doc = (ROOT / "docs" / "monitoring-scrape.md").read_text()

    assert markdown_table() in doc, "regenerate the table in docs/monitoring-scrape.md"
