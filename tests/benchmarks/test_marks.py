"""A target's dashboards mark its benchmarks: the series API names their spans."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks import services
from benchmarks.models import BenchmarkRun, RunStatus

pytestmark = pytest.mark.django_db
TINY = {"requests": 2, "input_tokens": 4, "output_tokens": 1}


def test_the_series_api_marks_a_benchmark_in_range(sim_target, planner, planner_api):
    run = services.run_create(target=sim_target, data=TINY, actor=planner, enqueue=False)
    now = timezone.now()
    BenchmarkRun.objects.filter(pk=run.pk).update(
        status=RunStatus.SUCCEEDED, started_at=now - timedelta(minutes=5),
        finished_at=now - timedelta(minutes=4))  # fmt: skip
    body = planner_api.get(
        f"/api/v1/monitoring/targets/{sim_target.pk}/series/",
        {"series": "vllm.requests_running", "range": "15m"},
    ).json()
    assert len(body["marks"]) == 1
    mark = body["marks"][0]
    assert mark["label"] == "Benchmark"
    assert mark["url"] == run.get_absolute_url()
    assert mark["end"] - mark["start"] == 60_000


def test_a_queued_or_old_run_is_not_marked(sim_target, planner, planner_api):
    old = services.run_create(target=sim_target, data=TINY, actor=planner, enqueue=False)
    now = timezone.now()
    BenchmarkRun.objects.filter(pk=old.pk).update(
        status=RunStatus.SUCCEEDED, started_at=now - timedelta(days=2),
        finished_at=now - timedelta(days=2) + timedelta(minutes=1))  # fmt: skip
    services.run_create(target=sim_target, data=TINY, actor=planner, enqueue=False)  # queued
    body = planner_api.get(
        f"/api/v1/monitoring/targets/{sim_target.pk}/series/",
        {"series": "vllm.requests_running", "range": "15m"},
    ).json()
    assert body["marks"] == []
