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
    assert {kind for _, kind, _ in first} == {"vllm", "ray"}
    assert ("sim-ray", "ray", "http://127.0.0.1:9401") in first
    assert len(first) == 4


def test_the_commands_make_run_looks_for_exist():
    from django.core.management import get_commands

    commands = get_commands()

    assert commands["simulate"] == "monitoring"
    assert commands["register_simulator_targets"] == "monitoring"
