"""One read-only target whose Prometheus is gone (MONITORING_PROMETHEUS_URL unset after it was
created, or the server down) breaks no page and no API for anyone: that target shows as "store
unavailable", the rest renders (issue 33, item 1)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from monitoring import stores
from monitoring.models import AllowedJob, PollStatus, Target
from monitoring.polling.run import poll
from planner.services import plan_create
from tests.inventory.factories import MachineFactory
from tests.planner.conftest import S1_SPEC
from tests.planner.fleet import build_demo_fleet

pytestmark = pytest.mark.django_db


@pytest.fixture
def s1_plan(planner):
    build_demo_fleet()
    return plan_create(spec={**S1_SPEC}, actor=planner)


@pytest.fixture
def stranded(settings, make_target, s1_plan):
    """A polled target, and read-only targets of each kind as they were saved while a
    Prometheus was set; now none is."""
    settings.MONITORING_PROMETHEUS_URL = ""
    stores.reset()
    for job in ("vllm", "gpu", "ray"):
        AllowedJob.objects.create(name=job)
    machine = MachineFactory()
    polled = make_target(name="polled")
    polled.machines.set([machine])
    read_only = []
    for kind in ("vllm", "gpu", "ray"):
        target = Target.objects.create(
            name=f"watched-{kind}",
            kind=kind,
            selector=f'{{job="{kind}"}}',
            poll_interval_s=15,
            plan=s1_plan,
        )
        target.machines.set([machine])
        read_only.append(target)
    return polled, read_only, machine


def test_the_overview_and_the_machine_pages_render(stranded, s1_plan, viewer_client, viewer_api):
    polled, read_only, machine = stranded
    for url in (
        f"/monitoring/plans/{s1_plan.public_id}/reality/",
        "/monitoring/",
        "/monitoring/overview/tiles/",
        "/monitoring/machines/",
        "/monitoring/machines/grid/",
        "/monitoring/targets/",
        f"/inventory/machines/{machine.pk}/",
    ):
        answer = viewer_client.get(url)
        assert answer.status_code == 200, url
    overview = viewer_api.get("/api/v1/monitoring/overview/")
    assert overview.status_code == 200
    assert {t["name"] for t in overview.json()["tiles"]} >= {"polled", "watched-vllm"}


def test_each_read_only_target_page_renders(stranded, viewer_client, viewer_api):
    _polled, read_only, _machine = stranded
    for target in read_only:
        vllm_only = [f"/api/v1/monitoring/targets/{target.pk}/plan-comparison/"]
        for url in (
            f"/monitoring/targets/{target.pk}/",
            f"/monitoring/targets/{target.pk}/panels/",
            f"/api/v1/monitoring/targets/{target.pk}/",
            f"/api/v1/monitoring/targets/{target.pk}/state/",
            *(vllm_only if target.kind == "vllm" else []),
        ):
            answer = (viewer_api if url.startswith("/api") else viewer_client).get(url)
            assert answer.status_code == 200, (url, answer.status_code)


def test_its_own_series_say_store_unavailable_and_fleet_series_sum_the_rest(stranded, viewer_api):
    _polled, read_only, _machine = stranded
    own = viewer_api.get(
        f"/api/v1/monitoring/targets/{read_only[0].pk}/series/", {"series": "poll.up"}
    )
    assert own.status_code == 503
    assert "MONITORING_PROMETHEUS_URL" in own.json()["detail"]

    fleet = viewer_api.get("/api/v1/monitoring/fleet-series/", {"series": "vllm.requests_running"})
    assert fleet.status_code == 200
    assert sorted(fleet.json()["unavailable"]) == sorted(t.pk for t in read_only)


def test_a_poll_of_it_records_store_unavailable_for_everyone_to_read(stranded, viewer_api):
    _polled, read_only, _machine = stranded
    poll(read_only[0])
    read_only[0].refresh_from_db()
    assert read_only[0].last_status == PollStatus.ERROR
    assert read_only[0].last_error_kind == "store"

    tile = next(
        t
        for t in viewer_api.get("/api/v1/monitoring/overview/").json()["tiles"]
        if t["id"] == read_only[0].pk
    )
    assert "time-series server" in tile["last_error"]  # not "no metrics from this address"
    state = viewer_api.get(f"/api/v1/monitoring/targets/{read_only[0].pk}/state/").json()
    assert state["last_error_kind"] == "store"
    assert read_only[0].last_poll_at <= timezone.now()


def test_evidence_and_calibration_from_it_say_so(stranded, planner_client, planner_api, planner):
    """Filling a decision's evidence and fitting a calibration read the target's window: its
    store not answering is a message and a 400 naming targets, never a 500."""
    from planner.decisions.services import decision_create

    _polled, read_only, _machine = stranded
    vllm = read_only[0]
    vllm.decision = decision_create(actor=planner, title="Serve it on the A800 pair")
    vllm.save(update_fields=["decision"])

    filled = planner_client.post(f"/monitoring/targets/{vllm.pk}/evidence/", follow=True)
    fitted = planner_api.post(
        "/api/v1/monitoring/calibration-profiles/", {"targets": [vllm.pk]}, format="json"
    )

    assert filled.status_code == 200
    assert "time-series server does not answer" in filled.content.decode()
    assert fitted.status_code == 400
    assert "time-series server does not answer" in fitted.json()["targets"][0]
