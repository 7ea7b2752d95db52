"""Rows for storage tests, written directly (no HTTP)."""

from __future__ import annotations

from datetime import datetime, timedelta

from monitoring.models import PollStatus, Sample, Target


def write_series(
    target: Target,
    series: str,
    *,
    start: datetime,
    step_s: float,
    count: int,
    value=lambda i: float(i),
    labels: str = "",
) -> list[Sample]:
    rows = [
        Sample(
            target=target,
            series=series,
            labels=labels,
            ts=start + timedelta(seconds=i * step_s),
            value=value(i),
        )
        for i in range(count)
    ]
    return Sample.objects.bulk_create(rows, batch_size=2000)


def mark_up(target: Target, when: datetime, latest: dict[str, float]) -> None:
    """Record that `target` answered its last poll at `when` with these latest values."""
    Target.objects.filter(pk=target.pk).update(
        last_status=PollStatus.OK, last_poll_at=when, last_success_at=when, latest=latest
    )


def mock_prometheus_store(handler):
    """A Prometheus store whose server is `handler` (an httpx.MockTransport handler)."""
    import httpx

    from monitoring.series.buffer import RetryBuffer
    from monitoring.stores.prometheus import PrometheusStore

    return PrometheusStore(
        query_url="http://127.0.0.1:9090",
        write_url="http://127.0.0.1:9090/api/v1/write",
        buffer=RetryBuffer(max_samples=10),
        client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
