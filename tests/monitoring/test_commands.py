"""Management commands: scrape (the poller's code path), register_simulator_targets, simulate."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from monitoring.models import Target
from tests.monitoring.conftest import FIXTURES


def test_scrape_prints_what_a_saved_vllm_payload_yields_as_json():
    out = StringIO()

    call_command(
        "scrape",
        str(FIXTURES / "vllm" / "v0_32_metrics_after.txt"),
        kind="vllm",
        format="json",
        stdout=out,
    )

    body = json.loads(out.getvalue())
    assert body["ok"] is True
    keys = {s["key"] for s in body["samples"]}
    assert {"vllm.requests_running", "vllm.kv_cache_capacity_tokens"} <= keys


def test_scrape_reads_a_ray_exporter_payload():
    out = StringIO()

    call_command(
        "scrape", str(FIXTURES / "ray" / "head_exporter_metrics_1.txt"), kind="ray", stdout=out
    )

    assert "ray.node.cpu_utilization_pct" in out.getvalue()


def test_scrape_explains_a_missing_file():
    with pytest.raises(CommandError, match="no such file"):
        call_command("scrape", "/nonexistent/metrics.txt", kind="vllm")


@pytest.mark.enable_socket
def test_scrape_fetches_a_url_like_the_poller(simulator):
    vllm = next(t for t in simulator.targets() if t.kind == "vllm")
    out = StringIO()

    call_command("scrape", vllm.base_url, kind="vllm", format="json", stdout=out)

    assert json.loads(out.getvalue())["ok"] is True


@pytest.mark.enable_socket
def test_scrape_reports_a_failed_url_as_an_error():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(CommandError, match="connect"):
        call_command("scrape", f"http://127.0.0.1:{port}", kind="vllm", stdout=StringIO())


@pytest.mark.django_db
def test_register_simulator_targets_is_idempotent():
    call_command("register_simulator_targets", stdout=StringIO())
    first = list(Target.objects.values_list("name", "kind", "base_url").order_by("name"))

    call_command("register_simulator_targets", stdout=StringIO())

    assert list(Target.objects.values_list("name", "kind", "base_url").order_by("name")) == first
    assert {kind for _, kind, _ in first} == {"vllm", "ray", "gpu"}
    assert ("sim-ray", "ray", "http://127.0.0.1:9401") in first
    # One dcgm-exporter per demo machine, on the simulator's main port like the vLLM servers.
    assert ("sim-gpu-a800-node-1", "gpu", "http://127.0.0.1:9400/dcgm/a800-node-1") in first
    assert len(first) == 4 + 5


@pytest.mark.django_db
def test_simulated_gpu_targets_are_linked_to_the_demo_machines():
    from tests.inventory.factories import MachineFactory

    machine = MachineFactory(hostname="a100-node-2", nics=[])

    call_command("register_simulator_targets", stdout=StringIO())

    assert list(Target.objects.get(name="sim-gpu-a100-node-2").machines.all()) == [machine]


@pytest.mark.django_db
def test_moving_the_simulator_keeps_the_machines_linked_to_its_vllm_targets():
    from tests.inventory.factories import MachineFactory

    machine = MachineFactory(hostname="a100-node-1", nics=[])
    call_command("register_simulator_targets", stdout=StringIO())
    Target.objects.get(name="sim-llama-8b").machines.set([machine])

    call_command("register_simulator_targets", "--port", "9500", stdout=StringIO())

    moved = Target.objects.get(name="sim-llama-8b")
    assert moved.base_url.startswith("http://127.0.0.1:9500/")
    assert list(moved.machines.all()) == [machine]


def test_scrape_prints_a_gpu_exporter_payload():
    out = StringIO()

    call_command(
        "scrape", str(FIXTURES / "gpu" / "nvidia_smi_h100_load.txt"), kind="gpu", stdout=out
    )

    assert 'gpu.utilization_pct{gpu="0"} = 100' in out.getvalue()


def test_scrape_with_two_captures_prints_rates_quantiles_and_the_raw_counters():
    out = StringIO()
    vllm = FIXTURES / "vllm"

    call_command(
        "scrape",
        str(vllm / "v0_32_metrics_after.txt"),
        str(vllm / "v0_32_metrics_later.txt"),
        kind="vllm",
        elapsed_s=20,
        stdout=out,
    )

    text = out.getvalue()
    assert "derived between the two captures (20 s apart):" in text
    assert "vllm.prompt_tokens_per_s = 8" in text  # 160 prompt tokens in 20 s
    assert "vllm.ttft_seconds.p95 = " in text
    assert "vllm.prefix_cache_hit_ratio = 0" in text
    assert "vllm.prompt_tokens: 249 -> 409 (+160)" in text


def test_scrape_with_two_captures_as_json_keeps_both():
    out = StringIO()
    vllm = FIXTURES / "vllm"

    call_command(
        "scrape",
        str(vllm / "v0_32_metrics_after.txt"),
        str(vllm / "v0_32_metrics_later.txt"),
        kind="vllm",
        elapsed_s=20,
        format="json",
        stdout=out,
    )

    body = json.loads(out.getvalue())
    assert body["before"]["ok"] is True
    rates = {s["key"]: s["value"] for s in body["samples"]}
    assert rates["vllm.prompt_tokens_per_s"] == pytest.approx(8.0)


def test_scrape_refuses_three_sources():
    with pytest.raises(CommandError, match="two captures"):
        call_command("scrape", "a", "b", "c", kind="vllm")


def test_the_commands_make_run_looks_for_exist():
    from django.core.management import get_commands

    commands = get_commands()

    assert commands["simulate"] == "monitoring"
    assert commands["register_simulator_targets"] == "monitoring"
