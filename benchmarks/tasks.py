"""The Celery task of a benchmark run, on its own queue ("benchmarks", config/celery.py)."""

from __future__ import annotations

from celery import shared_task

from benchmarks import services

END_STALE_RUNS = "benchmarks.end_stale_runs"


@shared_task(name=services.TASK_NAME, acks_late=False, ignore_result=True)
def run_benchmark_task(*, run_id: int) -> None:
    """Run one queued benchmark.

    Deliberately acks early: a redelivered benchmark would load the server a second time; a
    run whose worker died is ended as failed once its progress reports stop (end_stale_runs).
    """
    services.run_execute(run_id=run_id)


@shared_task(name=END_STALE_RUNS, ignore_result=True, soft_time_limit=30)
def end_stale_runs() -> int:
    """End the running benchmarks whose worker stopped reporting (beat, every minute, on the
    default queue: the benchmarks queue's one worker may be busy with a run for minutes)."""
    return services.runs_end_stale()
