"""Remote write while the time-series server stops and comes back during polling: the retry
buffer loses nothing, and when it must drop samples it says exactly how many."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitoring import stores, tasks
from monitoring.models import Target
from tests.monitoring.tsdb import servers
from tests.monitoring.tsdb.conftest import use_server

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.enable_socket,
    pytest.mark.tsdb,
]


@pytest.fixture
def restartable(tmp_path, settings):
    """A Prometheus of this test's own, restartable on the same port and data directory."""
    if servers.binary("prometheus") is None:
        pytest.skip("prometheus is not installed (Debian package prometheus; scripts/test-env)")
    port = servers.free_port()
    box = {"server": servers.start_prometheus(tmp_path, port=port)}
    use_server(settings, box["server"])
    stores.reset()

    def restart():
        box["server"] = servers.start_prometheus(tmp_path, port=port)

    yield box, restart
    box["server"].stop()
    stores.reset()


def _poll_n(target: Target, slots: range) -> None:
    for slot in slots:
        tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": slot})


def _stored_polls(target: Target) -> int:
    target.refresh_from_db()
    end = target.last_success_at
    window = stores.current().window(stores.ref(target), ["poll.up"], end - timedelta(hours=1), end)
    return len(window["poll.up"])


def test_samples_written_while_the_server_is_down_arrive_when_it_is_back(
    restartable, make_target, simulator
):
    box, restart = restartable
    vllm = next(t for t in simulator.targets() if t.kind == "vllm")
    target = make_target(base_url=vllm.base_url, poll_interval_s=60)

    _poll_n(target, range(1, 5))
    box["server"].stop()
    _poll_n(target, range(5, 9))  # polls go on; their samples wait in the buffer
    waiting = stores.current().write_report()
    assert waiting.pending > 0
    assert waiting.dropped == 0
    restart()
    _poll_n(target, range(9, 11))  # the next poll's write sends everything, oldest first

    report = stores.current().write_report()
    assert (report.pending, report.dropped) == (0, 0)
    assert report.written > waiting.written + waiting.pending
    assert _stored_polls(target) == 10


def test_a_worker_stopped_during_the_outage_loses_nothing(restartable, make_target, simulator):
    box, restart = restartable
    vllm = next(t for t in simulator.targets() if t.kind == "vllm")
    target = make_target(base_url=vllm.base_url, poll_interval_s=60)

    _poll_n(target, range(1, 3))
    box["server"].stop()
    _poll_n(target, range(3, 7))  # what the server does not take goes to the database spool
    assert stores.current().write_report().pending > 0
    stores.reset()  # the worker is gone, and its memory with it: a new one takes over
    restart()
    _poll_n(target, range(7, 9))

    report = stores.current().write_report()
    assert (report.pending, report.dropped) == (0, 0)
    assert _stored_polls(target) == 8


def _samples_on_server(target: Target) -> int:
    """Count every sample of the target the server holds (of the last hour)."""
    now = datetime.now(UTC)
    selector = f'{{job="serveplan",serveplan_target="{target.pk}"}}'
    rows = stores.current().polled.raw(selector, now - timedelta(hours=1), now)
    return sum(len(points) for _, points in rows)


def test_a_full_buffer_reports_exactly_what_was_lost(restartable, make_target, simulator, settings):
    box, restart = restartable
    settings.MONITORING_REMOTE_WRITE_BUFFER_SAMPLES = 60  # about two polls of the simulator
    store = stores.current()
    offered = []
    real_write = store.write
    store.write = lambda batch: (offered.append(len(batch)), real_write(batch))
    vllm = next(t for t in simulator.targets() if t.kind == "vllm")
    target = make_target(base_url=vllm.base_url, poll_interval_s=60)

    _poll_n(target, range(1, 3))
    box["server"].stop()
    _poll_n(target, range(3, 8))
    restart()
    _poll_n(target, range(8, 9))

    report = store.write_report()
    assert report.pending == 0
    assert report.dropped > 0
    assert report.written + report.dropped == sum(offered)
    assert _samples_on_server(target) == report.written
