"""Headless Chromium: the Machines view shows each machine's GPUs and updates them in place
while the simulated dcgm-exporters are polled."""

from __future__ import annotations

import dataclasses
import time

import pytest
from django.utils import timezone

from monitoring.polling.run import poll
from monitoring.simulator import Simulator
from monitoring.simulator.dcgm_sim import SimDcgm
from monitoring.tasks import fleet_tick_record
from tests.inventory.factories import MachineFactory

from .test_live_dashboards import _wait_for_chart, browser_page  # noqa: F401 (fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.enable_socket,
    pytest.mark.django_db(transaction=True),
]


def test_machines_view_updates_gpus_in_place(browser_page, live_server, make_target):  # noqa: F811
    page, errors = browser_page
    MachineFactory(hostname="a800-node-1", nics=[])
    MachineFactory(hostname="a800-node-2", nics=[])
    with Simulator(port=0, vllm_count=0, ray=False, gpu_machines=2, faults=False) as sim:
        targets = [
            make_target(name=f"gpu-{t.name}", kind="gpu", base_url=t.base_url, poll_interval_s=5)
            for t in sim.targets()
        ]
        for _ in range(2):
            for target in targets:
                assert poll(target).ok
            fleet_tick_record(now=timezone.now())  # the scheduler's tick sums the fleet
            time.sleep(1.1)

        page.goto(f"{live_server.url}/monitoring/machines/")
        node1 = page.locator('[data-machine="a800-node-1"]')
        assert node1.locator(".gpu-cell").count() == 8
        assert node1.locator(".gpu-free").count() == 2  # the demo profile's two free GPUs
        assert page.locator('[data-machine="a800-node-2"] .gpu-stuck').count() == 1
        _wait_for_chart(page, "#chart-fleet-gpus", errors)
        page.evaluate("window.__notReloaded = true")

        # Every GPU of node 1 now holds its memory without computing: a stuck process.
        profile = sim.gpus["a800-node-1"].profile
        sim.gpus["a800-node-1"] = SimDcgm(dataclasses.replace(profile, roles=("stuck",) * 8))
        for target in targets:
            assert poll(target).ok

        page.wait_for_selector('[data-machine="a800-node-1"] .gpu-stuck >> nth=7', timeout=30_000)
        assert node1.locator(".gpu-busy").count() == 0
        assert page.evaluate("window.__notReloaded") is True
        assert "0 of 8 free now" in node1.inner_text()
    assert errors == []
