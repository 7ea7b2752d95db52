"""Remote write 1.0 as ServePlan sends it: what goes in comes out of the compressed message."""

from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitoring.series import TargetRef, WriteBatch, WriteSample
from monitoring.series import remote_write as rw

keys = st.sampled_from(["vllm.ttft_seconds.p95", "ray.node.cpu_utilization_pct", "poll.up"])
names = st.sampled_from(["model", "node", "job", "instance", "__x", "serveplan_target"])
label_sets = st.dictionaries(names, st.text(max_size=6), max_size=3).map(
    lambda d: tuple(sorted(d.items()))
)
samples = st.builds(WriteSample, keys, label_sets, st.floats(allow_nan=False, width=64))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(samples, max_size=8), st.integers(1, 10**6), st.text(min_size=1, max_size=8))
def test_every_sample_comes_back_with_its_key_labels_target_and_time(batch, target_id, name):
    ts = datetime(2026, 12, 1, 12, 0, 0, 123000, tzinfo=UTC)
    target = TargetRef(id=target_id, name=name, kind="vllm", interval_s=15)

    decoded = rw.decode(rw.encode([WriteBatch(target=target, ts=ts, samples=tuple(batch))]))

    assert len(decoded) == len(batch)
    for (labels, points), sample in zip(decoded, batch, strict=True):
        assert list(labels) == sorted(labels)  # the protocol wants them sorted
        assert rw.key_of(labels["__name__"]) == sample.key
        assert (labels["job"], labels["instance"]) == (rw.JOB, name)
        assert rw.series_labels(labels) == (target_id, sample.labels)
        assert points == [(1796126400123, sample.value)]
        assert (labels.get(rw.LABELLED_LABEL) == "1") == bool(sample.labels)


def test_metric_names_are_valid_prometheus_names_and_one_to_one():
    from monitoring.scrape.keys import SERIES

    names = {rw.metric_name(s.key) for s in SERIES}
    assert len(names) == len(SERIES)
    assert all(n.replace(":", "").replace("_", "").isalnum() for n in names)
    assert all(rw.key_of(rw.metric_name(s.key)) == s.key for s in SERIES)


def test_the_headers_are_remote_write_1_0():
    assert rw.HEADERS["Content-Encoding"] == "snappy"
    assert rw.HEADERS["X-Prometheus-Remote-Write-Version"] == "0.1.0"
    assert rw.HEADERS["Content-Type"] == "application/x-protobuf"
