"""The series stores the conformance suite runs against: the embedded tables, and real
Prometheus and VictoriaMetrics servers (session-scoped, on loopback, marker `tsdb`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from monitoring import stores
from tests.monitoring.tsdb import servers


def _server(tmp_path_factory, name: str, start) -> Iterator[servers.Server]:
    if servers.binary(name) is None:
        pytest.skip(f"{name} is not installed (Debian package {name}; scripts/test-env)")
    server = start(tmp_path_factory.mktemp(name))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def prometheus_server(tmp_path_factory) -> Iterator[servers.Server]:
    yield from _server(tmp_path_factory, "prometheus", servers.start_prometheus)


@pytest.fixture(scope="session")
def victoria_metrics_server(tmp_path_factory) -> Iterator[servers.Server]:
    yield from _server(tmp_path_factory, "victoria-metrics", servers.start_victoria_metrics)


@dataclass
class Backend:
    name: str
    server: servers.Server | None = None

    def eventually(self, read: Callable[[], object], *, timeout_s: float = 60.0):
        """Return `read()` once it is truthy (the embedded store: at once)."""
        return servers.eventually(read, timeout_s=timeout_s)


BACKENDS = [
    pytest.param("embedded", id="embedded"),
    pytest.param("prometheus", id="prometheus", marks=pytest.mark.tsdb),
    pytest.param("victoria-metrics", id="victoria-metrics", marks=pytest.mark.tsdb),
]


def use_server(settings, server: servers.Server) -> None:
    settings.MONITORING_SERIES_STORE = stores.PROMETHEUS
    settings.MONITORING_PROMETHEUS_URL = server.url
    settings.MONITORING_REMOTE_WRITE_URL = server.write_url


@pytest.fixture(params=BACKENDS)
def backend(request, settings) -> Iterator[Backend]:
    """Each test runs once per store; a server starts empty of ServePlan's series."""
    if request.param == "embedded":
        settings.MONITORING_SERIES_STORE = stores.EMBEDDED
        yield Backend("embedded")
        return
    fixture = "prometheus_server" if request.param == "prometheus" else "victoria_metrics_server"
    server = request.getfixturevalue(fixture)
    server.delete_serveplan_series()
    use_server(settings, server)
    yield Backend(request.param, server)
