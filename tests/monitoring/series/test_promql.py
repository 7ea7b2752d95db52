"""Selectors of read-only targets: label matchers only, parsed and written back quoted."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitoring.series import promql


def test_a_selector_is_written_back_canonically():
    text = ' { job = "vllm", instance="10.0.0.5:8000" ,gpu=~"0|1",} '
    assert promql.canonical_selector(text) == '{job="vllm",instance="10.0.0.5:8000",gpu=~"0|1"}'


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('vllm:num_requests_running{job="vllm"}', "braces"),
        ('{__name__="up",job="vllm"}', "names no metric"),
        ('{gpu="0"}', "job or instance"),
        ('{job=~"vllm"}', "job or instance"),
        ('{job="vllm"} or vector(1)', "braces"),
        ('{job="vllm"}[5m]', "braces"),
        ('{job="vllm",instance="a"} / on() {job="x"}', "expected ','"),
        ('{job="vllm" instance="a"}', "expected ','"),
        ('{job="a\nb"}', "label matcher"),
        ("{" + 'job="x",' * 100 + "}", "longer"),
    ],
)
def test_anything_but_label_matchers_is_refused(text, why):
    with pytest.raises(promql.SelectorError, match=why):
        promql.parse_selector(text)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=40))
def test_any_value_survives_quoting(value):
    selector = promql.canonical_selector("{job=" + promql.quote(value) + "}")
    assert promql.parse_selector(selector)[0].value == value


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (r"[\\d", "not a regular expression"),  # issue 33: every read was a 503 after it
        (r"(a)\\1", "backreferences"),
        (r"(?=10)", "lookahead"),
        (r"a++", "possessive"),
        (r"a\\Z", r"\\Z"),
        (r"(?x)a", "flags"),
        (r"a{1001}", "at most 1000"),
    ],
)
def test_a_regex_prometheus_would_not_compile_is_refused(value, why):
    with pytest.raises(promql.SelectorError, match=why) as refused:
        promql.canonical_selector('{job="vllm",instance=~"' + value + '"}')
    assert "instance=~" in str(refused.value)  # names the matcher


@pytest.mark.parametrize(
    "value",
    [
        r"10\\.0\\.0\\.\\d+:8000",
        r"gpu[0-7]|cpu",
        r"\\pL+",
        r"\\p{Greek}",
        r"[[:alpha:]]+",
        r"\\Qa.b[\\E",
        r"a\\z",
        r"(?<name>a)",
        r"a(?i)b",
        r"(?U)a*",
        r"[*+?=]",
        r"\\(?=",
        r"\\x{41}",
    ],
)
def test_a_regex_in_re2_syntax_is_accepted(value):
    selector = promql.canonical_selector('{job="vllm",instance=~"' + value + '"}')
    assert promql.parse_selector(selector)[1].op == "=~"
