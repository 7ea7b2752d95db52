"""Every write to a benchmark run: create, cancel, execute (the task), calibrate, evidence."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from benchmarks.config import RunConfig, parse_config, plan_defaults
from benchmarks.loadgen import Endpoint, EndpointError, Outcome, Progress, run_benchmark
from benchmarks.loadgen.results import record_dict
from benchmarks.models import ACTIVE_STATUSES, BenchmarkRun, RunStatus
from benchmarks.prediction import compare_with_plan
from monitoring.models import PlanScope, Target, TargetKind
from monitoring.services import validate_monitored_url
from planner.models import Plan
from planner.selectors.plan_values import PlanUnreadable, plan_spec

TASK_NAME = "benchmarks.run"
QUEUE = "benchmarks"
STATUS_OF_OUTCOME = {
    Outcome.COMPLETED: RunStatus.SUCCEEDED,
    Outcome.CANCELLED: RunStatus.CANCELLED,
    Outcome.BROKEN_OFF: RunStatus.FAILED,
    Outcome.TIMED_OUT: RunStatus.FAILED,
}


def plan_share(target: Target, plan: Plan) -> int:
    """Return how many replicas share the plan's load behind the target (1: the whole plan)."""
    if target.plan_scope == PlanScope.PLAN:
        return 1
    return max(int(plan.replicas or 1), 1)


def replicas_behind(target: Target, plan: Plan) -> int:
    """Return how many of the plan's replicas the target's endpoint reaches."""
    return max(int(plan.replicas or 1), 1) if target.plan_scope == PlanScope.PLAN else 1


def _check_target(target: Target) -> None:
    if target.kind != TargetKind.VLLM:
        raise ValidationError(
            {"target": _("Only vLLM (OpenAI-compatible) targets can be benchmarked.")}
        )
    # The reach policy the poller obeys (monitoring.targets.reach), checked after DNS resolution.
    validate_monitored_url(target.base_url, field_name="target")


def run_create(
    *,
    target: Target,
    data: dict[str, Any],
    plan: Plan | None = None,
    actor: Any = None,
    enqueue: bool = True,
) -> BenchmarkRun:
    """Check and save a run, and queue it (`manage.py bench` runs it itself); raise
    ValidationError naming the field."""
    _check_target(target)
    plan = plan or target.plan
    defaults: dict[str, Any] = {}
    if plan is not None:
        try:
            defaults = plan_defaults(plan_spec(plan).workload, share=plan_share(target, plan))
        except PlanUnreadable as exc:
            raise ValidationError({"plan": str(exc)}) from None
    config = parse_config(data, defaults=defaults)
    run = BenchmarkRun(
        target=target,
        target_name=target.name,
        plan=plan,
        created_by=actor if getattr(actor, "pk", None) else None,
        config=config.as_dict(),
    )
    runs_end_stale(target=target)  # a run whose worker died must not block the endpoint
    busy = _("A benchmark of %(target)s is already queued or running.") % {"target": target.name}
    if BenchmarkRun.objects.filter(target=target, status__in=ACTIVE_STATUSES).exists():
        raise ValidationError({"target": busy})
    try:
        with transaction.atomic():
            run.save()
    except IntegrityError:  # another request queued one in between
        raise ValidationError({"target": busy}) from None
    if enqueue:
        # By name, so that the task module (which calls run_execute) is not imported here.
        transaction.on_commit(
            lambda: current_app.send_task(TASK_NAME, kwargs={"run_id": run.pk}, queue=QUEUE)
        )
    return run


@transaction.atomic
def run_cancel(*, run: BenchmarkRun, actor: Any = None) -> BenchmarkRun:
    """Ask a run to stop (audited); a queued one is cancelled at once, a running one at the
    load generator's next progress report (within a second)."""
    run = BenchmarkRun.objects.select_for_update().get(pk=run.pk)
    if not run.is_active:
        return run
    run.cancel_requested = True
    if run.status == RunStatus.QUEUED:
        run.status = RunStatus.CANCELLED
        run.finished_at = timezone.now()
    if getattr(actor, "pk", None):
        run._history_user = actor  # type: ignore[attr-defined]
    run.save()
    return run


def _progress_hook(run_id: int) -> Any:
    """Return the hook that stores the progress and reads the cancel flag (a one-row update).

    The load generator calls it in a helper thread (the ORM may not run on the event loop's
    thread); that thread's connection is closed after each call, so none is left behind.
    """

    def hook(p: Progress) -> bool:
        try:
            return _store_progress(run_id, p)
        finally:
            connection.close()

    return hook


def _store_progress(run_id: int, p: Progress) -> bool:
    BenchmarkRun.objects.filter(pk=run_id).update(
        heartbeat_at=timezone.now(),
        progress={
            "level": p.level + 1,
            "levels": p.levels,
            "done": p.done,
            "failed": p.failed,
            "total": p.total,
            "in_flight": p.in_flight,
            "elapsed_s": round(p.elapsed_s, 1),
            "eta_s": None if p.eta_s is None else round(p.eta_s, 1),
            "ttft_median_ms": None if p.ttft_median_ms is None else round(p.ttft_median_ms, 1),
            "tpot_median_ms": None if p.tpot_median_ms is None else round(p.tpot_median_ms, 2),
        },
    )
    return BenchmarkRun.objects.filter(pk=run_id, cancel_requested=True).exists()


def _finish(run: BenchmarkRun, **fields: Any) -> None:
    for name, value in fields.items():
        setattr(run, name, value)
    run.finished_at = timezone.now()
    # Not the progress: the hook wrote it to the row after this instance was read.
    run.save(update_fields=[*fields, "finished_at"])


def run_execute(*, run_id: int) -> BenchmarkRun | None:
    """Run a queued benchmark to its end (the Celery task calls this); None when not queued."""
    now = timezone.now()
    started = BenchmarkRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=now, heartbeat_at=now
    )
    if not started:  # cancelled while queued, or a redelivery of a run already done
        return None
    run = BenchmarkRun.objects.select_related("target", "plan").get(pk=run_id)
    target = run.target
    config = RunConfig(**run.config)
    try:
        if target is None:
            raise ValidationError({"target": _("The target was deleted.")})
        _check_target(target)
        result = asyncio.run(
            run_benchmark(
                Endpoint(base_url=target.base_url, bearer_token=target.token),
                config.workloads(),
                hook=_progress_hook(run.pk),
                max_duration_s=config.max_duration_s,
            )
        )
    except (ValidationError, EndpointError) as exc:
        message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        _finish(run, status=RunStatus.FAILED, error=message)
        return run
    levels = [level.as_dict() for level in result.levels]
    error = {
        Outcome.BROKEN_OFF: _("The server stopped answering; the results are partial."),
        Outcome.TIMED_OUT: _("The run reached its duration cap (%(s)s s); the results are partial.")
        % {"s": config.max_duration_s},
    }.get(result.outcome, "")
    comparison: dict[str, Any] = {}
    if run.plan is not None and target is not None:
        comparison = compare_with_plan(
            run.plan, config, levels, replicas=replicas_behind(target, run.plan)
        )
    _finish(
        run,
        status=STATUS_OF_OUTCOME[result.outcome],
        error=str(error),
        model_name=result.model,
        prompts_exact=result.prompts_exact,
        results={
            "outcome": str(result.outcome),
            "served_models": list(result.served_models),
            "levels": levels,
        },
        records=[
            [{k: v for k, v in record_dict(r).items() if k != "itl_s"} for r in level.records]
            for level in result.levels
        ],
        comparison=comparison,
    )
    return run


def runs_end_stale(*, target: Target | None = None, now: datetime | None = None) -> int:
    """End as failed every running benchmark (of `target`, or of any target) whose progress
    reports stopped BENCHMARK_STALE_AFTER_S ago: its worker died or was restarted (the task acks
    early, so nothing would run it again). The progress it reported stays; return how many."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.BENCHMARK_STALE_AFTER_S)
    stale = BenchmarkRun.objects.filter(status=RunStatus.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )
    if target is not None:
        stale = stale.filter(target=target)
    message = _(
        "The worker running this benchmark stopped reporting for %(s)s s (it died or was "
        "restarted): the run was ended, and only its last progress was kept."
    ) % {"s": settings.BENCHMARK_STALE_AFTER_S}
    ended = 0
    for run in stale:  # one by one: the status change is audited (simple-history)
        run.status, run.finished_at, run.error = RunStatus.FAILED, now, message
        run.save(update_fields=["status", "finished_at", "error"])
        ended += 1
    return ended
