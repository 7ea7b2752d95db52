"""ServePlan's own /metrics: counters shared through the database, histograms, registered gauges."""

import pytest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from core import opsmetrics

pytestmark = pytest.mark.django_db


def _families(client, **headers) -> dict:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200
    return {f.name: f for f in text_string_to_metric_families(response.content.decode())}


def _value(family, sample_name, **labels) -> float:
    return next(s.value for s in family.samples if s.name == sample_name and s.labels == labels)


def test_metrics_need_no_login_and_count_polls(client):
    opsmetrics.increment("serveplan_polls", {"kind": "vllm", "outcome": "ok"})
    opsmetrics.increment("serveplan_polls", {"kind": "vllm", "outcome": "ok"})
    opsmetrics.increment("serveplan_polls", {"kind": "ray", "outcome": "timeout"})

    polls = _families(client)["serveplan_polls"]

    assert _value(polls, "serveplan_polls_total", kind="vllm", outcome="ok") == 2
    assert _value(polls, "serveplan_polls_total", kind="ray", outcome="timeout") == 1


def test_poll_duration_histogram_is_cumulative(client):
    for seconds in (0.03, 0.2, 0.2, 7.0, 99.0):
        opsmetrics.observe("serveplan_poll_duration_seconds", seconds, {"kind": "vllm"})

    hist = _families(client)["serveplan_poll_duration_seconds"]

    name = "serveplan_poll_duration_seconds"
    assert _value(hist, f"{name}_bucket", kind="vllm", le="0.05") == 1
    assert _value(hist, f"{name}_bucket", kind="vllm", le="0.25") == 3
    assert _value(hist, f"{name}_bucket", kind="vllm", le="10.0") == 4
    assert _value(hist, f"{name}_bucket", kind="vllm", le="+Inf") == 5
    assert _value(hist, f"{name}_count", kind="vllm") == 5
    assert _value(hist, f"{name}_sum", kind="vllm") == pytest.approx(106.43)


def test_registered_gauges_are_collected_at_scrape_time(client):
    def lag():
        family = GaugeMetricFamily("serveplan_test_lag_seconds", "test gauge")
        family.add_metric([], 4.5)
        yield family

    opsmetrics.register_gauges(lag)
    try:
        families = _families(client)
    finally:
        opsmetrics._gauge_collectors.remove(lag)

    assert families["serveplan_test_lag_seconds"].samples[0].value == 4.5


def test_undeclared_metric_is_refused():
    with pytest.raises(KeyError):
        opsmetrics.increment("serveplan_typo")


def test_metrics_token_is_required_when_configured(client, settings):
    settings.METRICS_TOKEN = "s3cret"

    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret").status_code == 200
