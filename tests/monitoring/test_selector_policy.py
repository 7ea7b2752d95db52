"""Read-only targets: refused at creation (API, page, admin) without a Prometheus to read them
from, with a regex Prometheus would not compile, or outside the selector policy (the jobs an
admin allowed); a job withdrawn later stops the reads of its targets (issue 33: items 1, 9 and
the selector policy)."""

from __future__ import annotations

import pytest

from monitoring.models import AllowedJob, PollStatus, Target
from monitoring.polling.run import poll

pytestmark = pytest.mark.django_db

URL = "/api/v1/monitoring/targets/"
NEW = {"name": "watched", "kind": "vllm", "selector": '{job="vllm",instance="10.0.0.5:8000"}'}


@pytest.fixture
def no_prometheus(settings):
    settings.MONITORING_PROMETHEUS_URL = ""
    AllowedJob.objects.create(name="vllm")


@pytest.mark.parametrize("kind", ["vllm", "gpu", "ray"])
def test_the_api_refuses_a_read_only_target_without_a_prometheus(no_prometheus, planner_api, kind):
    answer = planner_api.post(URL, {**NEW, "kind": kind}, format="json")

    assert answer.status_code == 400
    assert "MONITORING_PROMETHEUS_URL" in answer.json()["selector"][0]
    assert not Target.objects.exists()


def test_the_page_refuses_it(no_prometheus, planner_client):
    answer = planner_client.post(
        "/monitoring/targets/new/", {**NEW, "poll_interval_s": 15, "enabled": "on"}
    )

    assert answer.status_code in (200, 400)
    assert b"MONITORING_PROMETHEUS_URL" in answer.content
    assert not Target.objects.exists()


def test_the_admin_refuses_it(no_prometheus, admin_client_):
    answer = admin_client_.post(
        "/admin/monitoring/target/add/",
        {**NEW, "plan_scope": "replica", "poll_interval_s": 15, "enabled": "on"},
    )

    # Targets are written through the API and the pages only (the admin shows them): 403.
    assert answer.status_code == 403
    assert not Target.objects.exists()


@pytest.fixture
def prometheus_set(settings):
    settings.MONITORING_PROMETHEUS_URL = "http://127.0.0.1:9"


def test_by_default_no_job_is_allowed(prometheus_set, planner_api):
    answer = planner_api.post(URL, NEW, format="json")

    assert answer.status_code == 400
    assert 'job "vllm" is not allowed' in answer.json()["selector"][0]


def test_a_job_an_admin_allowed_is_accepted_and_no_other(prometheus_set, planner_api):
    AllowedJob.objects.create(name="vllm")

    assert planner_api.post(URL, NEW, format="json").status_code == 201
    other = planner_api.post(
        URL, {**NEW, "name": "node", "selector": '{job="node",instance="10.0.0.5:9100"}'}
    )
    assert other.status_code == 400
    assert 'job "node" is not allowed' in other.json()["selector"][0]
    both = planner_api.post(
        URL, {**NEW, "name": "both", "selector": '{job="vllm",job="node"}'}, format="json"
    )
    assert both.status_code == 400


@pytest.mark.parametrize(
    "selector", ['{instance="10.0.0.5:8000"}', '{job=~"vllm|node",instance="10.0.0.5:8000"}']
)
def test_a_selector_must_name_its_job_exactly(prometheus_set, planner_api, selector):
    AllowedJob.objects.create(name="vllm")

    answer = planner_api.post(URL, {**NEW, "selector": selector}, format="json")

    assert answer.status_code == 400
    assert "Name the Prometheus job exactly" in answer.json()["selector"][0]


def test_an_invalid_regex_is_refused_naming_the_field(prometheus_set, planner_api):
    AllowedJob.objects.create(name="vllm")

    answer = planner_api.post(
        URL, {**NEW, "selector": '{job="vllm",instance=~"[\\\\d"}'}, format="json"
    )

    assert answer.status_code == 400
    assert "not a regular expression" in answer.json()["selector"][0]
    assert not Target.objects.exists()


def test_a_withdrawn_job_stops_the_reads_of_its_targets(prometheus_set, planner_api, admin_client_):
    job = AllowedJob.objects.create(name="vllm")
    target = Target.objects.get(pk=planner_api.post(URL, NEW, format="json").json()["id"])

    assert admin_client_.post(f"/monitoring/allowlist/jobs/{job.pk}/delete/").status_code == 302
    poll(target)
    target.refresh_from_db()
    series = planner_api.get(f"{URL}{target.pk}/series/", {"series": "poll.up"})

    assert (target.last_status, target.last_error_kind) == (PollStatus.ERROR, "forbidden_selector")
    assert series.status_code == 403
    assert 'job "vllm" is not allowed' in series.json()["detail"]


def test_only_admins_edit_the_policy(planner_client, admin_client_):
    assert planner_client.post("/monitoring/allowlist/jobs/", {"name": "x"}).status_code == 403
    assert not AllowedJob.objects.exists()

    added = admin_client_.post("/monitoring/allowlist/jobs/", {"name": " vllm ", "note": "ours"})
    assert added.status_code == 302
    assert AllowedJob.objects.get().name == "vllm"
    page = admin_client_.get("/monitoring/allowlist/").content.decode()
    assert "<code>vllm</code>" in page
    again = admin_client_.post("/monitoring/allowlist/jobs/", {"name": "vllm"})
    assert again.status_code == 400
    assert AllowedJob.history.count() == 1


def test_the_upgrade_allows_the_jobs_existing_targets_read():
    """Default deny stops no read at the upgrade: the jobs existing read-only targets match
    exactly are allowed by migration 0021 (an admin withdraws them at will)."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("monitoring.migrations.0021_allowed_prometheus_jobs")
    Target.objects.create(name="a", kind="vllm", selector='{job="vllm",instance="a:8000"}')
    Target.objects.create(name="b", kind="ray", selector='{instance="b:8080"}')
    Target.objects.create(name="c", kind="gpu", base_url="http://10.0.0.5:9400")

    migration.allow_the_jobs_read_today(apps, None)

    assert list(AllowedJob.objects.values_list("name", flat=True)) == ["vllm"]
