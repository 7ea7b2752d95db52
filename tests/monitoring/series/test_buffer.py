"""The retry buffer: every sample handed to it is written, pending, counted as dropped, or
counted apart as its target's (deleted meanwhile)."""

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitoring.series import TargetRef, WriteBatch, WriteReport, WriteSample
from monitoring.series.buffer import (
    Kept,
    LeftOut,
    Outcome,
    Refused,
    RetryBuffer,
    RetryLater,
    Sent,
    request_size,
    send_once,
)

TARGET = TargetRef(id=1, name="t", kind="vllm", interval_s=15)


def _batch(n: int, i: int = 0, target: TargetRef = TARGET) -> WriteBatch:
    samples = tuple(WriteSample("poll.up", (("i", str(j)),), float(i)) for j in range(n))
    return WriteBatch(target=target, ts=datetime.fromtimestamp(i, tz=UTC), samples=samples)


class Server:
    """A server behind a sender that leaves out the batches of `deleted` targets."""

    def __init__(self) -> None:
        self.state = "up"
        self.received: list[WriteBatch] = []
        self.deleted: set[int] = set()  # target ids

    def send(self, batches):
        live = [b for b in batches if b.target.id not in self.deleted]
        gone = sum(map(len, batches)) - sum(map(len, live))
        if not live:
            return LeftOut(target_deleted=gone)
        if self.state == "down":
            raise RetryLater("connection refused")
        if self.state == "refusing":
            raise Refused("HTTP 400", target_deleted=gone)
        self.received.extend(live)
        return LeftOut(target_deleted=gone)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(1, 30), st.sampled_from(["up", "down", "refusing"])), max_size=40
    ),
    st.integers(1, 200),
)
def test_nothing_is_lost_silently(steps, capacity):
    buffer, server = RetryBuffer(max_samples=capacity, max_request_samples=50), Server()
    added = 0
    for i, (size, state) in enumerate(steps):
        server.state = state
        buffer.add(_batch(size, i))
        added += size
        buffer.flush(server.send)
        report = buffer.report()
        assert report.written + report.pending + report.dropped == added
        assert report.written == sum(len(b) for b in server.received)
        assert report.pending <= capacity
    times = [b.ts for b in server.received]
    assert times == sorted(times)  # oldest first, never out of order


def test_a_server_back_up_gets_every_pending_sample_oldest_first():
    buffer, server = RetryBuffer(max_samples=1000), Server()
    server.state = "down"
    for i in range(5):
        buffer.add(_batch(10, i))
        assert not buffer.flush(server.send)
    assert buffer.report().pending == 50
    server.state = "up"
    assert buffer.flush(server.send)
    assert [b.ts.timestamp() for b in server.received] == [0, 1, 2, 3, 4]
    assert buffer.report().dropped == 0


def test_a_full_buffer_drops_the_oldest_and_says_how_many():
    buffer = RetryBuffer(max_samples=25)
    for i in range(4):
        buffer.add(_batch(10, i))
    report = buffer.report()
    assert (report.pending, report.dropped) == (20, 20)
    assert report.errors == ("buffer full: 10 samples dropped",) * 2


def test_a_buffer_holds_at_least_one_sample():
    with pytest.raises(ValueError, match="max_samples"):
        RetryBuffer(max_samples=0)


def test_a_backlog_drains_a_few_requests_per_flush():
    buffer, server = RetryBuffer(max_samples=1000, max_request_samples=10), Server()
    for i in range(5):
        buffer.add(_batch(10, i))
    assert not buffer.flush(server.send, max_requests=2)
    assert (len(server.received), buffer.report().pending) == (2, 30)
    assert buffer.flush(server.send, max_requests=3)
    assert [b.ts.timestamp() for b in server.received] == [0, 1, 2, 3, 4]


class ListSpool:
    """The spool's contract (monitoring.series.buffer.Spool), kept in a list."""

    def __init__(self) -> None:
        self.batches: list[WriteBatch] = []
        self.deleted: set[int] = set()  # target ids

    def keep(self, batches, *, max_samples):
        gone = sum(len(b) for b in batches if b.target.id in self.deleted)
        self.batches.extend(b for b in batches if b.target.id not in self.deleted)
        dropped = 0
        while self.pending() > max_samples:
            dropped += len(self.batches.pop(0))
        return Kept(dropped=dropped, target_deleted=gone)

    def delete_target(self, target_id: int) -> int:
        """A target's deletion, which takes its spooled batches (the database's cascade);
        return their samples."""
        self.deleted.add(target_id)
        cascaded = sum(len(b) for b in self.batches if b.target.id == target_id)
        self.batches = [b for b in self.batches if b.target.id != target_id]
        return cascaded

    def replay(self, send, *, max_samples):
        if not self.batches:
            return None
        rows = self.batches[: request_size(map(len, self.batches), max_samples)]
        sent = send_once(send, rows)
        if sent.outcome is not Outcome.RETRY:
            del self.batches[: len(rows)]
        return sent

    def pending(self):
        return sum(len(b) for b in self.batches)


TARGETS = [TargetRef(id=i, name=f"t{i}", kind="vllm", interval_s=15) for i in (1, 2, 3)]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(1, 30),
            st.sampled_from(["up", "down", "refusing"]),
            st.booleans(),  # the worker is stopped after this poll (a new buffer takes over)
            st.sampled_from(TARGETS),
            st.booleans(),  # the target is deleted after this poll committed, before its send
        ),
        max_size=40,
    ),
    st.integers(1, 200),
    st.one_of(st.none(), st.integers(1, 3)),
)
def test_with_a_spool_a_stopped_worker_loses_nothing(steps, capacity, max_requests):
    spool, server = ListSpool(), Server()
    buffer = RetryBuffer(max_samples=capacity, max_request_samples=50, spool=spool)
    added = written = dropped = target_deleted = cascaded = 0
    for i, (size, state, stopped, target, deleted) in enumerate(steps):
        server.state = state
        if target.id not in spool.deleted:  # a deleted target polls no more
            buffer.add(_batch(size, i, target))
            added += size
            if deleted:
                cascaded += spool.delete_target(target.id)
                server.deleted.add(target.id)
        buffer.flush(server.send, max_requests=max_requests)
        assert not buffer._batches  # nothing waits in this process alone
        report = buffer.report()
        assert report.pending == spool.pending() <= capacity
        assert (
            written + report.written + report.pending + dropped + report.dropped
        ) + target_deleted + report.target_deleted + cascaded == added
        if stopped:
            written, dropped = written + report.written, dropped + report.dropped
            target_deleted += report.target_deleted
            buffer = RetryBuffer(max_samples=capacity, max_request_samples=50, spool=spool)
    assert written + buffer.report().written == sum(len(b) for b in server.received)
    times = [b.ts for b in server.received]
    assert times == sorted(times)  # oldest first across workers too


def test_a_deleted_targets_samples_are_counted_apart_from_the_full_buffer():
    spool, server = ListSpool(), Server()
    buffer = RetryBuffer(max_samples=10, spool=spool)
    server.state = "down"
    buffer.add(_batch(8, 0, TARGETS[0]))
    buffer.flush(server.send)
    buffer.add(_batch(3, 1, TARGETS[1]))  # its poll committed, then its target was deleted
    buffer.add(_batch(4, 2, TARGETS[2]))
    spool.delete_target(TARGETS[1].id)

    buffer.flush(server.send)

    report = buffer.report()
    assert (report.pending, report.dropped, report.target_deleted) == (4, 8, 3)
    assert [e for e in report.errors if "buffer full" in e] == ["buffer full: 8 samples dropped"]


@pytest.mark.parametrize(
    ("state", "written", "dropped"), [("up", 4, 0), ("refusing", 0, 4), ("down", 0, 0)]
)
def test_what_the_sender_leaves_out_for_a_deleted_target_is_no_loss(state, written, dropped):
    buffer, server = RetryBuffer(max_samples=100), Server()
    buffer.add(_batch(3, 0, TARGETS[1]))  # its poll committed, then its target was deleted
    buffer.add(_batch(4, 1, TARGETS[2]))
    server.deleted.add(TARGETS[1].id)
    server.state = state

    buffer.flush(server.send)

    report = buffer.report()
    deleted = 0 if state == "down" else 3  # a request not taken leaves everything pending
    assert (report.written, report.dropped, report.target_deleted) == (written, dropped, deleted)
    assert report.pending == 7 - written - dropped - deleted
    assert not any("3 samples" in e or "7 samples" in e for e in report.errors)


def test_a_new_worker_sends_what_a_stopped_one_spooled_before_its_own():
    spool, server = ListSpool(), Server()
    first = RetryBuffer(max_samples=1000, spool=spool)
    server.state = "down"
    for i in range(3):
        first.add(_batch(10, i))
        assert not first.flush(server.send)
    assert first.report().pending == 30
    server.state = "up"
    second = RetryBuffer(max_samples=1000, spool=spool)  # the stopped worker's successor
    second.add(_batch(5, 3))
    assert second.flush(server.send)
    assert [b.ts.timestamp() for b in server.received] == [0, 1, 2, 3]
    assert second.report() == WriteReport(written=35, pending=0, dropped=0, errors=())


@given(st.lists(st.integers(1, 100), max_size=20), st.integers(1, 300))
def test_a_request_takes_the_leading_batches_that_fit_and_always_one(sizes, cap):
    taken = request_size(sizes, cap)
    if not sizes:
        assert taken == 0
        return
    assert taken >= 1
    assert taken == 1 or sum(sizes[:taken]) <= cap
    assert taken == len(sizes) or sum(sizes[: taken + 1]) > cap


def test_a_busy_spool_takes_this_workers_samples_behind_its_own():
    class BusySpool(ListSpool):
        def replay(self, send, *, max_samples):
            return Sent(0, Outcome.BUSY)

    spool, server = BusySpool(), Server()
    spool.keep([_batch(3, 0)], max_samples=100)
    buffer = RetryBuffer(max_samples=100, spool=spool)
    buffer.add(_batch(2, 1))

    assert not buffer.flush(server.send)
    assert server.received == []
    assert [b.ts.timestamp() for b in spool.batches] == [0, 1]
    assert buffer.report() == WriteReport(written=0, pending=5, dropped=0, errors=())
