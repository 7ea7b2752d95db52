"""The Celery task of a benchmark run, on its own queue ("benchmarks", config/celery.py)."""

from __future__ import annotations

from celery import shared_task

from benchmarks import services


@shared_task(name=services.TASK_NAME, acks_late=False, ignore_result=True)
def run_benchmark_task(*, run_id: int) -> None:
    """Run one queued benchmark.

    Deliberately acks early: a redelivered benchmark would load the server a second time; a
    run whose worker died stays "running" until someone cancels it.
    """
    services.run_execute(run_id=run_id)
