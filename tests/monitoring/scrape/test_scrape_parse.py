"""Parsing Prometheus text: wanted families only, TYPE lines decide, bad input is a ParseError."""

from __future__ import annotations

import math

import pytest

from monitoring.scrape.errors import ParseError
from monitoring.scrape.parse import parse, prefilter

from .conftest import fixture_text

TEXT = """# HELP req_total Requests.
# TYPE req_total counter
req_total{code="200"} 10.0
req_created{code="200"} 1.7e9
# HELP legacy Old counter without suffix.
# TYPE legacy counter
legacy 4
# HELP retries_total A gauge despite its name.
# TYPE retries_total gauge
retries_total 3
# HELP lat Latency.
# TYPE lat histogram
lat_bucket{le="0.1"} 1
lat_bucket{le="+Inf"} 2
lat_sum 0.3
lat_count 2
# HELP other Not wanted.
# TYPE other gauge
other{x="1"} 5
"""


def test_given_wanted_names_when_parsed_then_only_those_families_are_kept():
    families = parse(TEXT, {"req_total", "lat"})

    assert set(families) == {"req", "lat"}
    assert families["req"].type == "counter"
    assert [s.value for s in families["req"].counter_samples()] == [10.0]


def test_created_samples_are_dropped_before_parsing():
    assert "req_created" not in prefilter(TEXT, {"req"})


def test_counter_without_total_suffix_reads_like_one_with_it():
    families = parse(TEXT, {"legacy"})

    assert families["legacy"].type == "counter"
    assert [s.value for s in families["legacy"].counter_samples()] == [4.0]


def test_type_line_decides_not_the_suffix():
    families = parse(TEXT, {"retries_total"})

    assert families["retries_total"].type == "gauge"
    assert [s.value for s in families["retries_total"].counter_samples()] == [3.0]


def test_nan_and_infinities_parse_as_floats():
    text = '# TYPE g gauge\ng{a="1"} NaN\ng{a="2"} +Inf\ng{a="3"} -Inf\n'
    values = [s.value for s in parse(text, {"g"})["g"].samples]

    assert math.isnan(values[0])
    assert values[1:] == [math.inf, -math.inf]


def test_duplicate_label_sets_keep_the_first_sample():
    text = '# TYPE g gauge\ng{a="1",b="2"} 1\ng{b="2",a="1"} 9\n'

    samples = parse(text, {"g"})["g"].samples

    assert [s.value for s in samples] == [1.0]


def test_label_order_does_not_matter():
    text = '# TYPE g gauge\ng{b="x",a="y"} 1\n'

    assert parse(text, {"g"})["g"].samples[0].labels == {"a": "y", "b": "x"}


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("<html><body>Login</body></html>\n", id="html-page"),
        pytest.param('{"error": "nope"}\n', id="json"),
        pytest.param('# TYPE g gauge\ng{a="1} 1\n', id="unterminated-label"),
        pytest.param('# TYPE g gauge\ng{a="1"} one\n', id="not-a-number"),
        pytest.param("# TYPE g gauge\ng\n", id="no-value"),
    ],
)
def test_malformed_text_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse(text, {"g"})


def test_empty_payload_is_no_data_not_an_error():
    assert parse("", {"g"}) == {}


def test_missing_family_is_absent_not_an_error():
    assert parse(TEXT, {"ray_placement_groups"}) == {}


def test_real_ray_payload_parses_without_prefilter_too():
    text = fixture_text("ray", "head_exporter_metrics_1.txt")

    assert "ray_resources" in parse(text)
