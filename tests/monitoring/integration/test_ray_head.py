"""A real Ray head on 127.0.0.1, polled end to end into stored series and the Ray page."""

from __future__ import annotations

import time

import pytest

from monitoring.models import Sample
from monitoring.polling.run import poll
from tests.monitoring.integration.ray_head import new_head, require_ray

pytestmark = [pytest.mark.ray, pytest.mark.enable_socket, pytest.mark.django_db]

# Metric families appear 10-15 s after the activity that creates them.
METRICS_DEADLINE_S = 120


@pytest.fixture(scope="module")
def ray_head():
    require_ray()
    head = new_head()
    try:
        head.start()
        head.start_activity()
        yield head
    finally:
        head.stop()


def _poll_until(target, ready, deadline_s: float):
    deadline = time.monotonic() + deadline_s
    report = None
    while time.monotonic() < deadline:
        report = poll(target)
        if report.ok and ready(report.values):
            return report
        time.sleep(5)
    raise AssertionError(f"Ray metrics never became complete; last poll: {report}")


def test_a_real_ray_cluster_is_polled_into_stored_series_and_its_page(
    ray_head, make_target, viewer_client
):
    target = make_target(kind="ray", base_url=ray_head.dashboard_url, poll_interval_s=5)

    report = _poll_until(
        target,
        # Ray exports a reservation some seconds after it happens (0 until then): wait for it.
        lambda v: (
            'ray.placement_groups{state="PENDING"}' in v
            and v.get('ray.cluster.resources_used{resource="GPU"}', 0) >= 2
            and "ray.actors" in v
        ),
        METRICS_DEADLINE_S,
    )
    time.sleep(1.1)
    second = poll(target)

    assert second.ok
    target.refresh_from_db()
    stored = set(Sample.objects.filter(target=target).values_list("series", flat=True))
    assert {
        "ray.node.cpu_utilization_pct",
        "ray.node.memory_used_bytes",
        "ray.cluster.resources_used",
        "ray.cluster.resources_available",
        "ray.placement_groups",
        "ray.actors",
        "poll.up",
    } <= stored
    # Two GPUs reserved by the created placement group count as used in ray_resources.
    assert report.values['ray.cluster.resources_used{resource="GPU"}'] >= 2
    assert report.values['ray.placement_groups{state="PENDING"}'] >= 1
    assert f"127.0.0.1:{ray_head.metrics_port}" in target.discovered_exporters
    pending = target.info["placement_groups_pending"]
    assert [g["name"] for g in pending] == ["too-big"]
    assert pending[0]["scheduling_state"]

    page = viewer_client.get(target.get_absolute_url())
    assert page.status_code == 200
    html = page.content.decode()
    assert "too-big" in html
    assert f"127.0.0.1:{ray_head.metrics_port}" in html
    series = viewer_client.get(
        f"/api/v1/monitoring/targets/{target.pk}/series/",
        {"series": 'ray.cluster.resources_used{resource="GPU"},ray.actors', "range": "15m"},
    ).json()
    assert {s["key"] for s in series["series"]} == {"ray.cluster.resources_used", "ray.actors"}
