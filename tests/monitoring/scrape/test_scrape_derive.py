"""Rates, ratios and quantiles: hand-computed cases, resets and skew, hypothesis properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitoring.scrape.derive import (
    comparable,
    histogram_delta,
    histogram_quantile,
    quantiles,
    rate,
)
from monitoring.scrape.series import Histogram, RawSnapshot

INF = math.inf


def hist(*pairs: tuple[float, float], total: float = 0.0) -> Histogram:
    return Histogram(buckets=tuple(pairs), count=pairs[-1][1], sum=total)


def test_quantile_interpolates_inside_the_bucket_like_promql():
    # 10 observations: 2 in (0, 0.1], 6 in (0.1, 0.5], 2 in (0.5, 1]; none above.
    h = hist((0.1, 2), (0.5, 8), (1.0, 10), (INF, 10))

    # p50: rank 5 -> (5 - 2) / 6 of the way from 0.1 to 0.5.
    assert histogram_quantile(0.5, h) == pytest.approx(0.1 + 0.4 * 3 / 6)
    # p95: rank 9.5 -> (9.5 - 8) / 2 of the way from 0.5 to 1.0.
    assert histogram_quantile(0.95, h) == pytest.approx(0.875)
    # p10: rank 1 in the first bucket, which starts at 0.
    assert histogram_quantile(0.1, h) == pytest.approx(0.05)


def test_quantile_in_the_inf_bucket_returns_the_highest_finite_bound():
    h = hist((0.1, 1), (1.0, 2), (INF, 10))

    assert histogram_quantile(0.99, h) == 1.0


def test_quantile_of_an_empty_window_is_none():
    assert histogram_quantile(0.5, hist((0.1, 0), (INF, 0))) is None
    assert quantiles(None) == {}


def test_quantile_needs_an_inf_bucket():
    assert histogram_quantile(0.5, hist((0.1, 1), (1.0, 2))) is None


def test_quantile_rejects_q_outside_0_1():
    with pytest.raises(ValueError, match="quantile"):
        histogram_quantile(1.5, hist((0.1, 1), (INF, 1)))


def test_delta_subtracts_bucket_by_bucket():
    before = hist((0.1, 1), (1.0, 3), (INF, 4), total=2.0)
    after = hist((0.1, 3), (1.0, 9), (INF, 10), total=7.0)

    delta = histogram_delta(before, after)

    assert delta == Histogram(buckets=((0.1, 2), (1.0, 6), (INF, 6)), count=6, sum=5.0)


def test_delta_of_a_reset_histogram_is_none():
    before = hist((0.1, 5), (INF, 9))
    after = hist((0.1, 1), (INF, 2))

    assert histogram_delta(before, after) is None


def test_delta_with_a_different_bucket_layout_is_none():
    assert histogram_delta(hist((0.2, 1), (INF, 1)), hist((0.1, 1), (INF, 2))) is None


@pytest.mark.parametrize(
    ("previous", "current", "elapsed", "expected"),
    [
        pytest.param(100.0, 160.0, 15.0, 4.0, id="plain"),
        pytest.param(100.0, 100.0, 15.0, 0.0, id="idle"),
        pytest.param(100.0, 20.0, 15.0, None, id="went-backwards-restart"),
        pytest.param(None, 20.0, 15.0, None, id="new-series"),
        pytest.param(100.0, None, 15.0, None, id="series-gone"),
        pytest.param(100.0, 160.0, 0.0, None, id="no-time-elapsed"),
        pytest.param(100.0, 160.0, -3.0, None, id="clock-skew"),
        pytest.param(100.0, math.nan, 15.0, None, id="nan"),
        pytest.param(100.0, math.inf, 15.0, None, id="inf"),
    ],
)
def test_rate(previous, current, elapsed, expected):
    assert rate(previous, current, elapsed) == expected


def snap(ts: float, epoch: str | None = "e1") -> RawSnapshot:
    return RawSnapshot(kind="vllm", ts=ts, epoch=epoch)


def test_snapshots_compare_only_within_one_epoch_and_forward_in_time():
    assert comparable(snap(100), snap(115)) == 15
    assert comparable(snap(100), snap(115, epoch="e2")) is None  # restart / new SessionName
    assert comparable(snap(115), snap(100)) is None  # clock skew
    assert comparable(snap(100), snap(100)) is None
    assert comparable(None, snap(100)) is None


counts = st.floats(min_value=0, max_value=1e12, allow_nan=False)


@given(previous=counts, current=counts, elapsed=st.floats(-100, 1000, allow_nan=False))
def test_property_rates_are_never_negative(previous, current, elapsed):
    value = rate(previous, current, elapsed)

    assert value is None or value >= 0


@st.composite
def cumulative_histograms(draw):
    bounds = sorted(set(draw(st.lists(st.floats(0.001, 1000), min_size=1, max_size=12))))
    increments = draw(
        st.lists(st.integers(0, 1000), min_size=len(bounds) + 1, max_size=len(bounds) + 1)
    )
    cumulative, running = [], 0
    for bound, inc in zip([*bounds, INF], increments, strict=True):
        running += inc
        cumulative.append((bound, float(running)))
    return Histogram(buckets=tuple(cumulative), count=float(running), sum=0.0)


@given(h=cumulative_histograms())
def test_property_quantiles_are_monotone_and_inside_the_bounds(h):
    q = quantiles(h)

    if h.count == 0:
        assert q == {}
        return
    assert q["p50"] <= q["p95"] <= q["p99"]
    finite = [le for le, _ in h.buckets if le != INF]
    assert q["p50"] >= 0
    assert q["p99"] <= max(finite)


@given(before=cumulative_histograms(), extra=st.lists(st.integers(0, 50), max_size=13))
def test_property_delta_of_a_grown_histogram_has_non_negative_buckets(before, extra):
    grown, running = [], 0.0
    for i, (le, cum) in enumerate(before.buckets):
        running += extra[i] if i < len(extra) else 0
        grown.append((le, cum + running))
    after = Histogram(buckets=tuple(grown), count=grown[-1][1], sum=1.0)

    delta = histogram_delta(before, after)

    assert delta is not None
    assert all(c >= 0 for _, c in delta.buckets)
