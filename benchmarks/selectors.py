"""Reads of benchmark runs."""

from __future__ import annotations

from django.db.models import QuerySet

from benchmarks.models import BenchmarkRun


def run_list() -> QuerySet[BenchmarkRun]:
    """Return runs newest first, without their per-request timings."""
    return BenchmarkRun.objects.select_related("plan", "created_by").defer("records")


def runs_of_target(target_id: int) -> QuerySet[BenchmarkRun]:
    return run_list().filter(target_id=target_id)
