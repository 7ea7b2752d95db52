"""Benchmark runs through the service, the task and the API (a fake server or the simulator)."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.exceptions import ValidationError

from benchmarks import services
from benchmarks.models import BenchmarkRun, RunStatus
from monitoring.services import target_create
from tests.benchmarks.fake_openai import FakeConfig, FakeServer

pytestmark = pytest.mark.django_db

SMALL = {"requests": 4, "input_tokens": 16, "output_tokens": 3, "concurrency": [2]}


def test_the_task_is_routed_to_its_own_queue_under_a_stable_name():
    from benchmarks.tasks import run_benchmark_task
    from config.celery import app

    assert run_benchmark_task.name == "benchmarks.run"
    assert app.amqp.router.route({}, "benchmarks.run")["queue"].name == "benchmarks"
    assert app.amqp.router.route({}, "monitoring.poll_target")["queue"].name != "benchmarks"


def test_a_run_is_queued_after_commit_on_the_benchmarks_queue(
    sim_target, planner, no_enqueue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = services.run_create(target=sim_target, data=SMALL, actor=planner)
    assert run.status == RunStatus.QUEUED
    assert no_enqueue == [{"name": "benchmarks.run", "kwargs": {"run_id": run.pk},
                           "queue": "benchmarks"}]  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_run_measures_the_server_and_keeps_every_request(db, planner):
    with FakeServer(FakeConfig(model="org/m")) as server:
        target = target_create(name="fake", kind="vllm", base_url=server.url)
        run = services.run_create(target=target, data=SMALL, actor=planner, enqueue=False)
        services.run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert run.model_name == "org/m"
    assert run.prompts_exact
    summary = run.levels[0]["summary"]
    assert (summary["completed"], summary["total_input_tokens"]) == (4, 64)
    assert len(run.records[0]) == 4
    assert run.progress["done"] == 4
    assert run.started_at <= run.finished_at


@pytest.mark.django_db(transaction=True)
def test_a_run_uses_the_targets_bearer_token(db, planner):
    with FakeServer() as server:
        target = target_create(name="fake", kind="vllm", base_url=server.url, token="t0ken")
        run = services.run_create(target=target, data=SMALL, actor=planner, enqueue=False)
        services.run_execute(run_id=run.pk)
    assert {h["authorization"] for h in server.config.headers} == {"Bearer t0ken"}


@pytest.mark.django_db(transaction=True)
def test_a_server_that_breaks_off_fails_the_run_with_partial_results(db, planner):
    with FakeServer(FakeConfig(die_after=2)) as server:
        target = target_create(name="fake", kind="vllm", base_url=server.url)
        data = {**SMALL, "requests": 30, "concurrency": [1]}
        run = services.run_create(target=target, data=data, actor=planner, enqueue=False)
        services.run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "stopped answering" in run.error
    summary = run.levels[0]["summary"]
    assert summary["completed"] == 2
    assert summary["failed"] >= 8


def test_a_cancelled_queued_run_is_never_started(sim_target, planner):
    run = services.run_create(target=sim_target, data=SMALL, actor=planner, enqueue=False)
    services.run_cancel(run=run)
    assert services.run_execute(run_id=run.pk) is None
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


def test_one_run_per_endpoint_at_a_time(sim_target, planner):
    services.run_create(target=sim_target, data=SMALL, actor=planner, enqueue=False)
    with pytest.raises(ValidationError) as caught:
        services.run_create(target=sim_target, data=SMALL, actor=planner, enqueue=False)
    assert "target" in caught.value.message_dict


def test_only_vllm_targets_can_be_benchmarked(db, planner):
    ray = target_create(name="ray", kind="ray", base_url="http://127.0.0.1:9/")
    with pytest.raises(ValidationError) as caught:
        services.run_create(target=ray, data=SMALL, actor=planner, enqueue=False)
    assert "target" in caught.value.message_dict


def test_a_target_the_reach_policy_no_longer_allows_is_refused(sim_target, planner, settings):
    settings.MONITORING_ALLOW_LOOPBACK = False
    with pytest.raises(ValidationError) as caught:
        services.run_create(target=sim_target, data=SMALL, actor=planner, enqueue=False)
    assert "target" in caught.value.message_dict
    assert not BenchmarkRun.objects.exists()


# --- API ---


def test_viewers_cannot_list_or_start_benchmarks(viewer_api, sim_target):
    assert viewer_api.get("/api/v1/benchmarks/").status_code == 403
    response = viewer_api.post("/api/v1/benchmarks/", {"target": sim_target.pk, **SMALL},
                               format="json")  # fmt: skip
    assert response.status_code == 403


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param({"requests": 10**6}, "requests", id="requests-cap"),
        pytest.param({"concurrency": [100_000]}, "concurrency", id="concurrency-cap"),
        pytest.param({"input_tokens": 10**7}, "input_tokens", id="prompt-cap"),
        pytest.param({"max_duration_s": 10**7}, "max_duration_s", id="duration-cap"),
        pytest.param({"arrival": "sometimes"}, "arrival", id="arrival"),
        pytest.param({"arrival": "poisson"}, "request_rate_rps", id="poisson-without-rate"),
        pytest.param({"shared_prefix_fraction": 2}, "shared_prefix_fraction", id="prefix"),
        pytest.param({"surprise": 1}, "surprise", id="unknown-field"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(planner_api, sim_target, no_enqueue, change, field):
    response = planner_api.post("/api/v1/benchmarks/", {"target": sim_target.pk, **SMALL,
                                                        **change}, format="json")  # fmt: skip
    assert response.status_code == 400, response.content
    assert field in response.json()
    assert not BenchmarkRun.objects.exists()


def test_without_a_plan_the_lengths_are_required(planner_api, sim_target, no_enqueue):
    response = planner_api.post(
        "/api/v1/benchmarks/", {"target": sim_target.pk, "requests": 3}, format="json"
    )
    assert response.status_code == 400
    assert {"input_tokens", "output_tokens"} <= set(response.json())


def test_create_list_detail_cancel_and_exports(planner_api, sim_target, no_enqueue):
    response = planner_api.post("/api/v1/benchmarks/", {"target": sim_target.pk, **SMALL},
                                format="json")  # fmt: skip
    assert response.status_code == 201, response.content
    run_id = response.json()["public_id"]
    assert "token" not in response.json()
    assert planner_api.get("/api/v1/benchmarks/").json()["results"][0]["public_id"] == run_id
    detail = planner_api.get(f"/api/v1/benchmarks/{run_id}/").json()
    assert detail["config"]["concurrency"] == [2]
    cancelled = planner_api.post(f"/api/v1/benchmarks/{run_id}/cancel/").json()
    assert cancelled["status"] == "cancelled"
    exported = planner_api.get(f"/api/v1/benchmarks/{run_id}/export.csv/")
    assert exported.status_code == 200
    assert next(csv.reader(io.StringIO(exported.content.decode())))[0] == "level"


@pytest.mark.django_db(transaction=True)
def test_a_run_from_start_to_export_against_the_simulator(planner_api, sim_target, no_enqueue):
    run_id = planner_api.post("/api/v1/benchmarks/", {"target": sim_target.pk, **SMALL},
                              format="json").json()["public_id"]  # fmt: skip
    services.run_execute(run_id=BenchmarkRun.objects.get(public_id=run_id).pk)
    document = planner_api.get(f"/api/v1/benchmarks/{run_id}/export.json/").json()
    assert document["status"] == "succeeded"
    assert document["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert len(document["records"][0]) == 4
    rows = list(csv.DictReader(io.StringIO(
        planner_api.get(f"/api/v1/benchmarks/{run_id}/export.csv/").content.decode())))  # fmt: skip
    assert len(rows) == 4
    assert {r["output_tokens"] for r in rows} == {"3"}


def test_the_schema_documents_the_benchmarks_api(planner_api):
    schema = planner_api.get("/api/v1/schema/", {"format": "json"}).json()
    assert "/api/v1/benchmarks/" in schema["paths"]
    assert "/api/v1/benchmarks/{public_id}/cancel/" in schema["paths"]


def test_runs_are_audited(sim_target, planner):
    run = services.run_create(target=sim_target, data=SMALL, actor=planner, enqueue=False)
    services.run_cancel(run=run)
    assert run.history.count() >= 2
