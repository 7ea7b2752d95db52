"""The benchmark runs a target's dashboards mark (registered with monitoring.time_marks)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from django.utils.translation import gettext as _

from benchmarks.models import BenchmarkRun
from monitoring.time_marks import TimeMark


def benchmark_marks(target_id: int, start: datetime, end: datetime) -> list[TimeMark]:
    """Return the target's runs that overlap [start, end], started ones only."""
    runs = (
        BenchmarkRun.objects.filter(
            target_id=target_id, started_at__isnull=False, started_at__lt=end
        )
        .filter(Q(finished_at__isnull=True) | Q(finished_at__gt=start))
        .only("public_id", "started_at", "finished_at", "status")
        .order_by("started_at")[:20]
    )
    return [
        TimeMark(
            start=run.started_at,
            end=run.finished_at,
            label=_("Benchmark"),
            url=run.get_absolute_url(),
        )  # fmt: skip
        for run in runs
        if run.started_at is not None
    ]
