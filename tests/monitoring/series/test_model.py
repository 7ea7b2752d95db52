"""The values that cross the series-store interface: the API's JSON survives them unchanged."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitoring.series import RangeResult, SeriesPoints, TargetRef

label_names = st.sampled_from(["model", "node", "gpu", "reason"])
labels = st.dictionaries(label_names, st.text(max_size=8), max_size=3)
values = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def series_json(draw):
    times = sorted(draw(st.lists(st.integers(0, 2**41), max_size=20, unique=True)))
    chosen = draw(labels)
    key = draw(st.sampled_from(["vllm.requests_running", "gpu.machine.gpus", "poll.up"]))
    points = SeriesPoints(
        target_id=draw(st.one_of(st.none(), st.integers(1, 10**6))),
        key=key,
        labels=tuple(sorted(chosen.items())),
        times_ms=tuple(times),
        values=tuple(draw(values) for _ in times),
    )
    return points.to_json()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(series_json(), max_size=5), st.sampled_from(["raw", "rollup", "prometheus"]))
def test_a_range_answer_round_trips_through_the_typed_result(series, source):
    data = {"start": 1, "end": 2, "bucket_s": 3.5, "source": source, "series": series}
    assert RangeResult.from_json(data).to_json() == data


def test_a_series_id_is_its_key_and_sorted_labels():
    points = SeriesPoints(
        target_id=1, key="k", labels=(("a", "1"), ("b", 'x"y')), times_ms=(), values=()
    )
    assert points.id == 'k{a="1",b="x\\"y"}'


def test_a_target_with_a_selector_is_read_only():
    polled = TargetRef(id=1, name="a", kind="vllm", interval_s=15)
    watched = TargetRef(id=2, name="b", kind="vllm", interval_s=15, selector='{job="vllm"}')
    assert not polled.read_only
    assert watched.read_only
