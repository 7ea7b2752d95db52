"""A time-series server that does not answer: the series API says so (503), never a 500."""

import pytest

from monitoring import stores
from tests.monitoring.tsdb.servers import free_port

pytestmark = pytest.mark.enable_socket


@pytest.fixture
def dead_server(settings):
    settings.MONITORING_SERIES_STORE = stores.PROMETHEUS
    settings.MONITORING_PROMETHEUS_URL = f"http://127.0.0.1:{free_port()}"
    settings.MONITORING_PROMETHEUS_TIMEOUT_S = 1.0


def test_the_series_api_answers_503_when_the_server_is_down(dead_server, make_target, viewer_api):
    target = make_target()
    answer = viewer_api.get(
        f"/api/v1/monitoring/targets/{target.pk}/series/", {"series": "poll.up"}
    )
    assert answer.status_code == 503
    assert answer.json()["detail"].startswith("time-series server")
    fleet = viewer_api.get("/api/v1/monitoring/fleet-series/", {"series": "poll.up"})
    assert fleet.status_code == 503


@pytest.mark.parametrize("url", ["", "ftp://127.0.0.1:9090", "http://user:pw@127.0.0.1:9090"])
def test_a_bad_server_url_is_refused_naming_the_setting(settings, url):
    from django.core.exceptions import ImproperlyConfigured

    settings.MONITORING_SERIES_STORE = stores.PROMETHEUS
    settings.MONITORING_PROMETHEUS_URL = url
    with pytest.raises(ImproperlyConfigured, match="MONITORING_PROMETHEUS_URL"):
        stores.current()
