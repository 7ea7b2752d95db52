"""The remote-write spool in the database: what a worker could not send outlives the worker,
leaves oldest first, keeps its bound, and dies with its target."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import httpx
import pytest

from core.models import OpsCounter
from monitoring import services
from monitoring.models import SpooledWrite
from monitoring.series import TargetRef, WriteBatch, WriteSample
from monitoring.series.buffer import Kept, Outcome, Refused, RetryBuffer, RetryLater
from monitoring.stores.spool import DatabaseSpool
from tests.monitoring.factories import mock_prometheus_store

pytestmark = pytest.mark.django_db


def _batch(target, n: int, second: int) -> WriteBatch:
    ref = TargetRef(id=target.pk, name=target.name, kind=target.kind, interval_s=15)
    samples = tuple(
        WriteSample("vllm.running", (("model", f"m{j}"),) if j else (), float(j)) for j in range(n)
    )
    return WriteBatch(target=ref, ts=datetime.fromtimestamp(second, tz=UTC), samples=samples)


class Server:
    def __init__(self, fail=None) -> None:
        self.fail = fail
        self.received: list[WriteBatch] = []

    def send(self, batches):
        if self.fail:
            raise self.fail
        self.received.extend(batches)


def test_batches_come_back_as_they_went_in_oldest_first(make_target):
    target, spool, server = make_target(), DatabaseSpool(), Server()
    batches = [_batch(target, 3, s) for s in (30, 10, 20)]
    batches[0] = WriteBatch(
        target=batches[0].target,
        ts=batches[0].ts,
        samples=(WriteSample("vllm.kv", (), math.nan), *batches[0].samples),
    )
    assert spool.keep(batches, max_samples=100) == Kept()
    assert spool.pending() == 10

    replayed = spool.replay(server.send, max_samples=100)

    assert (replayed.samples, replayed.outcome) == (10, Outcome.WRITTEN)
    assert [b.ts.timestamp() for b in server.received] == [10, 20, 30]
    assert server.received[1] == batches[2]
    assert server.received[0].samples == batches[1].samples
    assert math.isnan(server.received[2].samples[0].value)
    assert spool.pending() == 0
    assert spool.replay(server.send, max_samples=100) is None


def test_one_replay_sends_at_most_a_request_but_always_one_batch(make_target):
    target, spool, server = make_target(), DatabaseSpool(), Server()
    spool.keep([_batch(target, 4, s) for s in range(5)], max_samples=100)
    assert spool.replay(server.send, max_samples=9).samples == 8
    assert spool.replay(server.send, max_samples=2).samples == 4  # one batch is bigger
    assert spool.pending() == 8


def test_a_server_that_asks_to_retry_keeps_the_rows_and_a_refusal_drops_them(make_target):
    target, spool = make_target(), DatabaseSpool()
    spool.keep([_batch(target, 4, s) for s in range(2)], max_samples=100)

    later = spool.replay(Server(RetryLater("HTTP 503")).send, max_samples=100)
    assert (later.outcome, later.error, spool.pending()) == (Outcome.RETRY, "HTTP 503", 8)

    refused = spool.replay(Server(Refused("HTTP 400: bad")).send, max_samples=100)
    assert (refused.outcome, refused.samples, spool.pending()) == (Outcome.DROPPED, 8, 0)


def test_the_bound_drops_the_oldest_and_counts_them(make_target):
    target, spool = make_target(), DatabaseSpool()
    spool.keep([_batch(target, 10, s) for s in range(3)], max_samples=25)
    assert spool.pending() == 20
    assert spool.keep([_batch(target, 10, 3)], max_samples=25) == Kept(dropped=10)
    assert sorted(SpooledWrite.objects.values_list("polled_at", flat=True)) == [
        datetime.fromtimestamp(s, tz=UTC) for s in (2, 3)
    ]


def test_a_deleted_targets_samples_never_reach_the_server(make_target):
    gone, kept, spool = make_target(), make_target(), DatabaseSpool()
    spool.keep([_batch(gone, 5, 1), _batch(kept, 5, 2)], max_samples=100)
    stale = _batch(gone, 3, 3)  # a poll that finishes after the delete
    services.target_delete(target=gone)
    assert spool.pending() == 5

    assert spool.keep([stale], max_samples=100) == Kept(target_deleted=3)
    assert spool.pending() == 5


def test_the_bound_and_a_deleted_target_are_counted_apart(make_target):
    gone, kept, spool = make_target(), make_target(), DatabaseSpool()
    spool.keep([_batch(kept, 10, s) for s in range(2)], max_samples=25)
    stale = _batch(gone, 3, 2)
    services.target_delete(target=gone)

    assert spool.keep([stale, _batch(kept, 10, 3)], max_samples=25) == Kept(
        dropped=10, target_deleted=3
    )
    assert spool.pending() == 20


def test_a_deleted_targets_samples_are_no_buffer_loss(make_target):
    """The buffer and /metrics count them apart from the samples the bound dropped."""
    gone, kept = make_target(), make_target()
    store = mock_prometheus_store(lambda request: httpx.Response(503))
    store.buffer = RetryBuffer(max_samples=10, spool=DatabaseSpool())
    store.buffer.add(_batch(gone, 3, 1))
    store.buffer.add(_batch(kept, 4, 2))
    services.target_delete(target=gone)

    assert not store.flush()  # the server is down: both batches go to the spool

    report = store.write_report()
    assert (report.pending, report.dropped, report.target_deleted) == (4, 0, 3)
    assert not any("buffer full" in e for e in report.errors)
    counts = dict(
        OpsCounter.objects.filter(name="serveplan_remote_write_samples").values_list(
            "labels", "value"
        )
    )
    assert counts == {"outcome=target_deleted": 3.0}


def test_the_fleets_sums_are_spooled_as_the_fleet(make_target):
    from monitoring.series import remote_write as rw

    spool, server = DatabaseSpool(), Server()
    sums = WriteBatch(
        target=rw.FLEET,
        ts=datetime.fromtimestamp(5, tz=UTC),
        samples=(WriteSample("vllm.requests_running", (), 7.0),),
    )
    assert spool.keep([sums], max_samples=100) == Kept()
    spool.replay(server.send, max_samples=100)
    assert server.received == [sums]


def test_while_another_worker_sends_the_spool_a_replay_waits_for_nothing(make_target):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the replay lock is PostgreSQL's advisory lock")
    import psycopg

    from monitoring.stores.spool import REPLAY_LOCK_KEY

    target, spool, server = make_target(), DatabaseSpool(), Server()
    spool.keep([_batch(target, 4, 1)], max_samples=100)
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params) as other:  # a worker in the middle of a replay
        other.execute("SELECT pg_advisory_xact_lock(%s)", [REPLAY_LOCK_KEY])
        busy = spool.replay(server.send, max_samples=100)
    assert (busy.outcome, busy.samples, server.received, spool.pending()) == (
        Outcome.BUSY,
        0,
        [],
        4,
    )
    assert spool.replay(server.send, max_samples=100).outcome is Outcome.WRITTEN
