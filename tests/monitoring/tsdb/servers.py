"""Real time-series servers for the tests: Prometheus and VictoriaMetrics (Debian packages
`prometheus`, `victoria-metrics`; scripts/test-env installs them), each on a free loopback port
with a temporary data directory, killed when the test session ends."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

STARTUP_S = 120.0  # the machine is shared: a start under load can take a while
ATTEMPTS = 3


def eventually(read, *, timeout_s: float = 60.0):
    """Return `read()` once it is truthy, or its last answer after `timeout_s`: a server makes
    written samples searchable a moment later (VictoriaMetrics ~1 s)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.25)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    name: str
    url: str
    write_url: str
    process: subprocess.Popen
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def delete_serveplan_series(self) -> None:
        """Forget every series ServePlan wrote (both servers' admin API)."""
        httpx.post(
            f"{self.url}/api/v1/admin/tsdb/delete_series",
            params={"match[]": '{job="serveplan"}'},
            timeout=10,
        ).raise_for_status()


def _wait_ready(server: Server, path: str) -> Server:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise ServerExited(f"{server.name} exited: {server.log.read_text()[-2000:]}")
        try:
            if httpx.get(server.url + path, timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(
        f"{server.name} not ready in {STARTUP_S} s: {server.log.read_text()[-2000:]}"
    )


def binary(name: str) -> str | None:
    return shutil.which(name)


def prometheus_config(scrape: list[tuple[str, str, str]] = (), interval_s: float = 1.0) -> str:
    """A prometheus.yml accepting samples up to 30 days old (ServePlan's copy command backfills
    history through remote write) and scraping `scrape`: (job, host:port, metrics path)."""
    lines = [
        "global:",
        f"  scrape_interval: {int(interval_s * 1000)}ms",
        f"  evaluation_interval: {int(interval_s * 1000)}ms",
        "storage:",
        "  tsdb:",
        "    out_of_order_time_window: 30d",
        "scrape_configs:",
    ]
    jobs: dict[tuple[str, str], list[str]] = {}
    for job, address, path in scrape:  # one job may scrape several addresses (a Ray cluster)
        jobs.setdefault((job, path), []).append(address)
    for (job, path), addresses in jobs.items():
        lines += [
            f"  - job_name: '{job}'",
            f"    metrics_path: '{path}'",
            "    static_configs:",
            f"      - targets: [{', '.join(repr(a) for a in addresses)}]",
        ]
    if not scrape:
        lines[-1] = "scrape_configs: []"
    return "\n".join(lines) + "\n"


def _start_on_free_port(start, workdir: Path, port: int) -> Server:
    """Start on `port`, or on a free port, trying another when one was taken between choosing
    it and binding it (other test processes on the machine pick free ports too)."""
    if port:
        return start(workdir, port)
    for attempt in range(ATTEMPTS):
        try:
            return start(workdir, free_port())
        except ServerExited:
            if attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


class ServerExited(RuntimeError):
    pass


def _start(name: str, workdir: Path, port: int, args: list[str], ready: str) -> Server:
    log = workdir / f"{name}.log"
    process = subprocess.Popen(
        [binary(name) or name, *args],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    return _wait_ready(Server(name, url, f"{url}/api/v1/write", process, log), ready)


def start_prometheus(
    workdir: Path, *, scrape: list[tuple[str, str, str]] = (), port: int = 0
) -> Server:
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(prometheus_config(list(scrape)))

    def start(workdir: Path, port: int) -> Server:
        return _start(
            "prometheus", workdir, port, _prometheus_args(config, workdir, port), "/-/ready"
        )

    return _start_on_free_port(start, workdir, port)


def _prometheus_args(config: Path, workdir: Path, port: int) -> list[str]:
    return [
        f"--config.file={config}",
        f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--web.enable-remote-write-receiver",
        "--web.enable-admin-api",
        "--storage.tsdb.retention.time=60d",
    ]


def start_victoria_metrics(workdir: Path, *, port: int = 0) -> Server:
    workdir.mkdir(parents=True, exist_ok=True)

    def start(workdir: Path, port: int) -> Server:
        return _start("victoria-metrics", workdir, port, _vm_args(workdir, port), "/health")

    return _start_on_free_port(start, workdir, port)


def _vm_args(workdir: Path, port: int) -> list[str]:
    return [
        f"-storageDataPath={workdir / 'data'}",
        f"-httpListenAddr=127.0.0.1:{port}",
        "-retentionPeriod=10y",
        # Samples are readable as soon as they are written (the default hides 30 s).
        "-search.latencyOffset=0s",
        # ...and the newest point of a range query is the one computed, not a copy of the point
        # before it (VictoriaMetrics' "adjustment" of recent points below a 1 m step).
        "-search.maxStepForPointsAdjustment=1ms",
        "-search.disableCache",
    ]
