"""A real two-node Ray cluster on loopback: the Ray page's nodes, and the alert when one is lost.

The head listens on 127.0.0.2 and the worker on 127.0.0.3 (see ray_head.RayHead): the inventory
knows them as two machines by those management addresses, as it would know two hosts.
"""

from __future__ import annotations

import socket
import time

import pytest

from monitoring import selectors
from monitoring.models import AlertEvent, Target
from monitoring.polling.run import poll
from monitoring.targets import kinds
from monitoring.tasks import alerts_evaluator
from tests.inventory.factories import MachineFactory
from tests.monitoring.integration.ray_head import new_head, require_ray

pytestmark = [pytest.mark.ray, pytest.mark.enable_socket, pytest.mark.django_db]

HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"
DEADLINE_S = 90


@pytest.fixture
def two_nodes():
    require_ray()
    head = new_head(ip=HEAD_IP, cluster=True)
    try:
        head.start()
        worker_port = head.start_worker("worker", WORKER_IP, num_gpus=2)
        yield head, worker_port
    finally:
        head.stop()


def _poll_until(target, ready, what: str):
    deadline = time.monotonic() + DEADLINE_S
    report = None
    while time.monotonic() < deadline:
        report = poll(target, on_stored=alerts_evaluator(target))
        target.refresh_from_db()
        if report.ok and ready(target):
            return report
        time.sleep(3)
    raise AssertionError(f"{what}: never seen; last poll: {report}")


def _lost_node_events(target):
    return AlertEvent.objects.filter(
        target=target, rule__series="ray.cluster.nodes_missing", resolved_at__isnull=True
    )


def test_two_real_nodes_are_named_counted_and_a_lost_one_raises_an_alert_that_stays(
    two_nodes, make_target, viewer_client
):
    head, worker_port = two_nodes
    machines = [
        MachineFactory(hostname="ray-head", management_address=HEAD_IP, nics=[]),
        MachineFactory(hostname="ray-worker", management_address=WORKER_IP, nics=[]),
    ]
    target = make_target(
        kind="ray", base_url=head.dashboard_url, poll_interval_s=5, machines=machines
    )

    def tile(t: Target) -> dict:
        return kinds.get("ray").tiles(t.latest.get, True)

    # A node's resource series come some seconds after its node series: wait for both.
    _poll_until(
        target,
        lambda t: tile(t)["nodes"] == 2 and tile(t)["gpus_total"] == 6,  # 4 on the head + 2
        "two nodes answering with their GPUs",
    )
    state = selectors.ray_state(target)
    assert target.latest["ray.cluster.nodes_expected"] == 2
    assert target.latest["ray.cluster.nodes_missing"] == 0
    # Named by the host name Ray reports (both nodes run on this machine), with each exporter.
    assert [n["name"] for n in state["nodes"]] == [socket.gethostname()] * 2
    assert sorted(n["node"] for n in state["nodes"]) == sorted(
        [f"{HEAD_IP}:{head.metrics_port}", f"{WORKER_IP}:{worker_port}"]
    )
    assert state["missing_hosts"] == []
    assert not _lost_node_events(target).exists()

    head.kill_node("worker")
    _poll_until(target, lambda t: tile(t)["nodes"] == 1, "one node")

    target = Target.objects.get(pk=target.pk)
    assert target.latest["ray.cluster.nodes_missing"] == 1
    assert target.last_status == "ok"  # the head still answers: the alert says what is wrong
    assert _lost_node_events(target).count() == 1
    # The next poll keeps the alert open and the page keeps saying which machine is missing.
    poll(target, on_stored=alerts_evaluator(target))
    assert _lost_node_events(target).count() == 1
    html = viewer_client.get(target.get_absolute_url()).content.decode()
    assert 'data-missing-nodes="1"' in html
    assert "ray-worker" in html
