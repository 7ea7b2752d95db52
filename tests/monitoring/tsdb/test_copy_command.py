"""The one-off copy of the embedded store's samples to a time-series server (remote write)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from monitoring import stores
from monitoring.models import Rollup
from monitoring.series import SeriesMatch
from monitoring.series.buffer import RetryBuffer
from monitoring.stores.prometheus import PrometheusStore
from tests.monitoring.factories import write_series
from tests.monitoring.tsdb.conftest import use_server
from tests.monitoring.tsdb.servers import eventually

pytestmark = [pytest.mark.django_db, pytest.mark.enable_socket]


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
    use_server(settings, server)
    out = StringIO()

    call_command("copy_samples_to_prometheus", stdout=out)

    assert "copied 61 samples" in out.getvalue()
    remote = PrometheusStore(
        query_url=server.url, write_url=server.write_url, buffer=RetryBuffer(max_samples=1)
    )
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
