"""The one-off copy of the embedded store's samples to a time-series server (remote write)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from monitoring import stores
from monitoring.fleet import MINUTE_STEP_S, TICK_STEP_S
from monitoring.models import FleetSum, Rollup
from monitoring.series import SeriesMatch, WriteBatch
from monitoring.series import remote_write as rw
from monitoring.series.buffer import Refused, RetryBuffer
from monitoring.stores.copy import CopyStopped, copy_samples
from monitoring.stores.prometheus import PrometheusStore
from tests.monitoring.factories import write_series
from tests.monitoring.tsdb.conftest import use_server
from tests.monitoring.tsdb.servers import eventually

pytestmark = [pytest.mark.django_db, pytest.mark.enable_socket]


def _copy(settings, server) -> tuple[str, PrometheusStore]:
    """Run the command against `server`; return its output and a reader of the server."""
    use_server(settings, server)
    out = StringIO()
    call_command("copy_samples_to_prometheus", stdout=out)
    remote = PrometheusStore(
        query_url=server.url, write_url=server.write_url, buffer=RetryBuffer(max_samples=1)
    )
    return out.getvalue(), remote


@pytest.mark.tsdb
@pytest.mark.parametrize("server_fixture", ["prometheus_server", "victoria_metrics_server"])
def test_every_sample_and_the_older_rollups_arrive(request, server_fixture, settings, make_target):
    server = request.getfixturevalue(server_fixture)
    server.delete_serveplan_series()
    a, b = make_target(), make_target()
    end = datetime.now(UTC).replace(microsecond=0)
    start = end - timedelta(minutes=5)
    write_series(a, "vllm.requests_running", start=start, step_s=15, count=20)
    write_series(b, "vllm.requests_running", start=start, step_s=15, count=20, value=lambda i: 7.0)
    write_series(a, "vllm.requests_running", start=start, step_s=15, count=20, labels='{model="m"}')
    old = start - timedelta(minutes=10)
    Rollup.objects.create(
        target=a, series="vllm.requests_running", minute=old, count=4, min=1, avg=2.5, max=4, last=3
    )

    out, remote = _copy(settings, server)

    assert "copied 61 samples" in out
    points = eventually(
        lambda: (
            len(
                w := remote.window(stores.ref(a), ["vllm.requests_running"], old, end)[
                    "vllm.requests_running"
                ]
            )
            == 21
            and w
        )
    )
    assert points[0] == (old, 2.5)  # the rollup, older than every raw sample
    assert [v for _, v in points[1:]] == [float(i) for i in range(20)]
    other = remote.window(stores.ref(b), ["vllm.requests_running"], old, end)
    assert [v for _, v in other["vllm.requests_running"]] == [7.0] * 20
    labelled = remote.range(
        [stores.ref(a)],
        [SeriesMatch("vllm.requests_running", '{model="m"}')],
        start,
        end,
        1000,
    )
    assert [s.labels for s in labelled.series] == [(("model", "m"),)]


RUNNING = "vllm.requests_running"


def _fleet_history(base: datetime) -> tuple[list[datetime], list[datetime]]:
    """Minute rows from 5 minutes before `base` to 2 minutes after it, and ticks from 35 s
    after it (retention deleted the older ones mid-minute); return (the minutes whose ticks are
    gone, the ticks). A minute row that its ticks still cover holds 999 (never copied)."""
    old_minutes = [base - timedelta(minutes=5 - i) for i in range(5)]
    covered = [base + timedelta(minutes=i) for i in range(3)]
    ticks = [base + timedelta(seconds=35 + TICK_STEP_S * i) for i in range(30)]
    FleetSum.objects.bulk_create(
        [
            FleetSum(step_s=MINUTE_STEP_S, ts=m, values={RUNNING: 100 + i, "vllm.x": 1})
            for i, m in enumerate(old_minutes)
        ]
        + [FleetSum(step_s=MINUTE_STEP_S, ts=m, values={RUNNING: 999}) for m in covered]
        + [FleetSum(step_s=TICK_STEP_S, ts=t, values={RUNNING: i}) for i, t in enumerate(ticks)]
    )
    return old_minutes, ticks


@pytest.mark.tsdb
@pytest.mark.parametrize("server_fixture", ["prometheus_server", "victoria_metrics_server"])
def test_the_fleet_sums_arrive_as_the_fleet_series(request, server_fixture, settings, make_target):
    """The ticks, and the minutes before them (not the minutes the ticks cover), as the
    series the Prometheus store's tick writes: the overview reads them for the past."""
    server = request.getfixturevalue(server_fixture)
    server.delete_serveplan_series()
    a, b = make_target(), make_target()
    base = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=5)
    old_minutes, ticks = _fleet_history(base)
    write_series(a, RUNNING, start=ticks[0], step_s=TICK_STEP_S, count=3)

    out, remote = _copy(settings, server)

    assert "copied 3 samples and 35 fleet sums" in out
    start, end = old_minutes[0], ticks[-1]
    points = eventually(
        lambda: len(w := remote.window(rw.FLEET, [RUNNING], start, end)[RUNNING]) == 35 and w
    )
    assert points == [(m, 100.0 + i) for i, m in enumerate(old_minutes)] + [
        (t, float(i)) for i, t in enumerate(ticks)
    ]
    other = remote.window(rw.FLEET, ["vllm.x"], start, end)["vllm.x"]
    assert [t for t, _ in other] == old_minutes
    # The overview's read: the whole fleet's sums come from the fleet series, the copied past
    # included (summing the targets' series would give a's 3 samples).
    sums = remote.fleet_sum(
        [stores.ref(a), stores.ref(b)], [RUNNING], start - timedelta(minutes=1), end, 1000
    )
    values = [v for v in sums.series[0].values if v is not None]
    assert values == [100.0 + i for i in range(5)] + [float(i) for i in range(30)]


class _Sender:
    """A server that takes `accept` requests, then refuses for good."""

    def __init__(self, accept: int) -> None:
        self.accept = accept
        self.requests: list[list[WriteBatch]] = []

    def send(self, batches) -> None:
        if len(self.requests) >= self.accept:
            raise Refused("HTTP 400: no")
        self.requests.append(list(batches))


def _sent(sender: _Sender) -> list[tuple[int, datetime, str, float]]:
    return [
        (b.target.id, b.ts, s.key, s.value)
        for request in sender.requests
        for b in request
        for s in b.samples
    ]


def test_a_stopped_copy_resumes_from_its_last_time_with_samples_and_fleet_sums(make_target):
    """Samples and fleet sums go in one time order: resuming --since the reported time sends
    what the stopped copy had not, the fleet's sums included, and each series in time order."""
    a = make_target()
    base = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    old_minutes, ticks = _fleet_history(base)
    write_series(a, RUNNING, start=base - timedelta(minutes=2), step_s=15, count=20)
    Rollup.objects.create(
        target=a,
        series=RUNNING,
        minute=base - timedelta(minutes=4),
        count=4,
        min=1,
        avg=2.5,
        max=4,
        last=3,
    )
    whole = _Sender(accept=10**6)
    full = copy_samples(whole, request_samples=7)
    assert (full.samples, full.fleet_sums) == (21, 35)
    stopped = _Sender(accept=4)

    with pytest.raises(CopyStopped) as exc:
        copy_samples(stopped, request_samples=7)

    done = exc.value.report
    assert done.requests == 4
    assert 0 < done.fleet_sums < 35
    assert done.last < ticks[-1]
    resumed = _Sender(accept=10**6)
    copy_samples(resumed, since=done.last, request_samples=7)
    assert set(_sent(stopped)) | set(_sent(resumed)) == set(_sent(whole))
    for sender in (whole, stopped, resumed):
        times = [b.ts for request in sender.requests for b in request]
        assert times == sorted(times)
    fleet_times = [t for target, t, key, _ in _sent(whole) if target == 0 and key == RUNNING]
    assert fleet_times == old_minutes + ticks


@pytest.mark.parametrize("first_s", [0, 30, 59])
def test_a_rollup_is_copied_only_for_a_minute_that_ended_by_the_oldest_raw_sample(
    make_target, first_s
):
    """The minute the oldest raw sample falls in is theirs: its rollup's average would cover
    the part they cover a second time (the rule of the fleet's minutes and ticks)."""
    a = make_target()
    base = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    Rollup.objects.bulk_create(
        Rollup(
            target=a,
            series=RUNNING,
            minute=base + timedelta(minutes=m),
            count=4,
            min=1,
            avg=100.0 + m,
            max=4,
            last=3,
        )
        for m in (-2, -1, 0, 1)
    )
    write_series(a, RUNNING, start=base + timedelta(seconds=first_s), step_s=15, count=4)
    sender = _Sender(accept=10**6)

    report = copy_samples(sender, request_samples=100)

    assert [(t, value) for _, t, _, value in _sent(sender)] == [
        (base - timedelta(minutes=2), 98.0),
        (base - timedelta(minutes=1), 99.0),  # ends at `base`: at or before the oldest sample
    ] + [(base + timedelta(seconds=first_s + 15 * i), float(i)) for i in range(4)]
    assert report.samples == 6


def test_no_rollups_copies_the_fleet_ticks_but_no_minute(make_target):
    _fleet_history(datetime(2026, 12, 1, 10, 0, tzinfo=UTC))
    sender = _Sender(accept=10**6)

    report = copy_samples(sender, rollups=False)

    assert (report.samples, report.fleet_sums) == (0, 30)
    assert {b.target for request in sender.requests for b in request} == {rw.FLEET}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "--since"),
        (["--since", "2026-12-01T00:00:00"], "--since"),
        (["--request-samples", "0"], "--request-samples"),
    ],
)
def test_bad_arguments_are_refused_naming_them(settings, args, message):
    settings.MONITORING_PROMETHEUS_URL = "http://127.0.0.1:9"
    with pytest.raises(CommandError, match=message):
        call_command("copy_samples_to_prometheus", *args)


def test_without_a_server_url_the_command_names_the_setting(settings):
    settings.MONITORING_PROMETHEUS_URL = ""
    with pytest.raises(CommandError, match="MONITORING_PROMETHEUS_URL"):
        call_command("copy_samples_to_prometheus")
