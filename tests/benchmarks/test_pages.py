"""The benchmark pages: planners only, a form whose errors name the field, live progress JSON."""

from __future__ import annotations

import pytest

from benchmarks import services
from benchmarks.models import BenchmarkRun

pytestmark = pytest.mark.django_db
TINY = {"requests": 2, "input_tokens": 4, "output_tokens": 1}


def test_viewers_are_turned_away(viewer_client):
    assert viewer_client.get("/benchmarks/").status_code == 403


def test_the_list_offers_the_vllm_targets(planner_client, sim_target):
    page = planner_client.get("/benchmarks/")
    assert page.status_code == 200
    assert sim_target.name.encode() in page.content


def test_the_form_queues_a_run_and_opens_its_page(planner_client, sim_target, no_enqueue,
                                                  django_capture_on_commit_callbacks):  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        response = planner_client.post("/benchmarks/", {
            "target": sim_target.pk, "requests": "4", "input_tokens": "16",
            "output_tokens": "2", "concurrency": "1, 4"})  # fmt: skip
    run = BenchmarkRun.objects.get()
    assert response.url == run.get_absolute_url()
    assert run.config["concurrency"] == [1, 4]
    assert len(no_enqueue) == 1
    page = planner_client.get(run.get_absolute_url())
    assert b"run-progress" in page.content
    progress = planner_client.get(f"/benchmarks/{run.public_id}/progress/").json()
    assert progress == {"status": "queued", "active": True, "progress": {}}


def test_the_form_sets_spread_prefix_and_slos(planner_client, sim_target, no_enqueue):
    planner_client.post("/benchmarks/", {
        "target": sim_target.pk, "requests": "4", "input_tokens": "64", "output_tokens": "8",
        "input_tokens_sd": "16", "output_tokens_sd": "2", "shared_prefix_fraction": "0.5",
        "ttft_slo_ms": "500", "tpot_slo_ms": "40", "e2el_slo_ms": "2000"})  # fmt: skip
    config = BenchmarkRun.objects.get().config
    assert config["input_tokens_sd"] == 16
    assert config["output_tokens_sd"] == 2
    assert config["shared_prefix_fraction"] == 0.5
    assert (config["ttft_slo_ms"], config["tpot_slo_ms"], config["e2el_slo_ms"]) == (500, 40, 2000)


def test_a_bad_prefix_fraction_is_named_and_saves_nothing(planner_client, sim_target):
    response = planner_client.post("/benchmarks/", {
        "target": sim_target.pk, "requests": "4", "input_tokens": "64", "output_tokens": "8",
        "shared_prefix_fraction": "1.5"}, follow=True)  # fmt: skip
    assert b"shared_prefix_fraction" in response.content
    assert not BenchmarkRun.objects.exists()


def test_a_bad_form_names_the_field_and_saves_nothing(planner_client, sim_target):
    response = planner_client.post("/benchmarks/", {"target": sim_target.pk, "requests": "0",
                                                    "input_tokens": "1", "output_tokens": "1"},
                                   follow=True)  # fmt: skip
    assert b"requests" in response.content
    assert not BenchmarkRun.objects.exists()


def test_cancel_from_the_page(planner_client, sim_target, planner):
    run = services.run_create(target=sim_target, data=TINY, enqueue=False)
    planner_client.post(f"/benchmarks/{run.public_id}/cancel/")
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert run.history.first().history_user == planner


def test_export_of_an_unknown_format_is_404(planner_client, sim_target):
    run = services.run_create(target=sim_target, data=TINY, enqueue=False)
    assert planner_client.get(f"/benchmarks/{run.public_id}/export.xml").status_code == 404
