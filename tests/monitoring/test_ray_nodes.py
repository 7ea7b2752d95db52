"""Ray nodes by host name, and a lost node: fewer nodes than the inventory or plan expects."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitoring import selectors
from monitoring.alerts.evaluate import alerts_evaluate
from monitoring.machines import cluster_nodes
from monitoring.models import AlertEvent, Target
from monitoring.scrape.series import Sample
from tests.inventory.factories import MachineFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_nodes_are_named_by_host_name_from_the_dashboard_or_the_inventory(make_target):
    MachineFactory(hostname="gpu-b", management_address="10.0.0.12", nics=[])
    target = make_target(kind="ray", base_url="http://127.0.0.1:9/ray")
    Target.objects.filter(pk=target.pk).update(
        info={"nodes": [{"ip": "10.0.0.11", "hostname": "gpu-a", "exporter": "10.0.0.11:8080"}]}
    )
    target.refresh_from_db()

    names = cluster_nodes.node_names(target, ["10.0.0.11:8080", "10.0.0.12:8080", "10.9.9.9:1"])

    assert names == {
        "10.0.0.11:8080": "gpu-a",
        "10.0.0.12:8080": "gpu-b",
        "10.9.9.9:1": "10.9.9.9:1",
    }


def test_a_lost_node_is_counted_missing_and_opens_the_alert(make_target):
    a = MachineFactory(hostname="gpu-a", management_address="10.0.0.11", nics=[])
    b = MachineFactory(hostname="gpu-b", management_address="10.0.0.12", nics=[])
    target = make_target(kind="ray", base_url="http://127.0.0.1:9/ray", machines=[a, b])

    both = cluster_nodes.poll_extras(target, [Sample("ray.cluster.nodes_scraped", (), 2.0)], {})
    one = cluster_nodes.poll_extras(target, [Sample("ray.cluster.nodes_scraped", (), 1.0)], {})

    assert [(s.key, s.value) for s in both] == [
        ("ray.cluster.nodes_expected", 2.0),
        ("ray.cluster.nodes_missing", 0.0),
    ]
    assert one[1].value == 1.0
    alerts_evaluate(target=target, values={s.key: s.value for s in one}, now=T0)
    assert AlertEvent.objects.filter(
        target=target, rule__series="ray.cluster.nodes_missing", resolved_at__isnull=True
    ).exists()
    assert cluster_nodes.missing_hosts(target, ["gpu-a"]) == ["gpu-b"]


def test_a_node_answers_for_its_machine_by_the_management_address(make_target):
    # Ray names nodes by the host's own name (`ip-10-0-0-5`), not the inventory's (`gpu-a`).
    a = MachineFactory(hostname="gpu-a", management_address="10.0.0.5", nics=[])
    b = MachineFactory(hostname="gpu-b", management_address="10.0.0.6", nics=[])
    target = make_target(kind="ray", base_url="http://127.0.0.1:9/ray", machines=[a, b])

    missing = cluster_nodes.missing_hosts(target, ["ip-10-0-0-5"], ["10.0.0.5:8080"])

    assert missing == ["gpu-b"]
    assert cluster_nodes.missing_hosts(target, [], ["10.0.0.5:8080", "10.0.0.6:8080"]) == []


def test_without_an_expectation_nothing_is_stored(make_target):
    target = make_target(kind="ray", base_url="http://127.0.0.1:9/ray")

    assert cluster_nodes.poll_extras(target, [], {}) == []


def test_the_ray_page_shows_names_dead_and_missing_nodes(make_target, viewer_client):
    a = MachineFactory(hostname="gpu-a", management_address="127.0.0.1", nics=[])
    b = MachineFactory(hostname="gpu-b", nics=[])
    target = make_target(kind="ray", base_url="http://127.0.0.1:9/ray", machines=[a, b])
    Target.objects.filter(pk=target.pk).update(
        info={"nodes": [{"ip": "10.0.0.12", "hostname": "gpu-b", "state": "DEAD"}]}
    )
    target.refresh_from_db()

    state = selectors.ray_state(target)
    page = viewer_client.get(target.get_absolute_url())

    assert state["missing_hosts"] == ["gpu-a", "gpu-b"]  # nothing answered yet
    assert [n["hostname"] for n in state["dead_nodes"]] == ["gpu-b"]
    html = page.content.decode()
    assert 'data-missing-nodes="2"' in html
    assert "chart-tasks" in html
    assert "chart-cpus" in html
    assert "chart-ray-gpu-history" in html


def test_without_machines_the_plans_hosts_are_expected_read_without_its_result(
    make_target, planner, django_assert_num_queries
):
    from planner.services import plan_create
    from tests.planner.conftest import S1_SPEC
    from tests.planner.fleet import build_demo_fleet

    build_demo_fleet()
    plan = plan_create(spec={**S1_SPEC}, actor=planner)
    assert plan.hostnames
    target = make_target(kind="ray", base_url="http://127.0.0.1:9/ray", plan=plan)
    target = Target.objects.defer("token").get(pk=target.pk)  # as a poll loads it

    with django_assert_num_queries(2) as queries:  # the linked machines, the plan's hosts
        extras = cluster_nodes.poll_extras(
            target, [Sample("ray.cluster.nodes_scraped", (), 1.0)], {}
        )

    assert extras[0].value == float(len({h.lower() for h in plan.hostnames}))
    assert extras[1].value == extras[0].value - 1
    assert '"result"' not in queries.captured_queries[-1]["sql"]
