"""The retry buffer: every sample handed to it is written, pending or counted as dropped."""

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitoring.series import TargetRef, WriteBatch, WriteSample
from monitoring.series.buffer import Refused, RetryBuffer, RetryLater

TARGET = TargetRef(id=1, name="t", kind="vllm", interval_s=15)


def _batch(n: int, i: int = 0) -> WriteBatch:
    samples = tuple(WriteSample("poll.up", (("i", str(j)),), float(i)) for j in range(n))
    return WriteBatch(target=TARGET, ts=datetime.fromtimestamp(i, tz=UTC), samples=samples)


class Server:
    def __init__(self) -> None:
        self.state = "up"
        self.received: list[WriteBatch] = []

    def send(self, batches):
        if self.state == "down":
            raise RetryLater("connection refused")
        if self.state == "refusing":
            raise Refused("HTTP 400")
        self.received.extend(batches)


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
