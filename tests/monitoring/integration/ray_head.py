"""Start a real Ray head on loopback for a test, and stop exactly the processes it started.

Recipe of METRICS.md: RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 keeps Ray on 127.0.0.1; fake GPUs give
GPU resources (no utilization series: no driver); no Ray Serve (its replicas bind every
interface). Every port is picked free, so that concurrent runs do not collide.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path


def free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def pids_mentioning(marker: str) -> list[int]:
    """Return the pids whose command line contains `marker` (our temp dir)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            pids.append(int(entry.name))
    return pids


@dataclass
class RayHead:
    temp_dir: str
    gcs_port: int
    dashboard_port: int
    metrics_port: int
    env: dict[str, str]
    driver: subprocess.Popen | None = None

    @property
    def dashboard_url(self) -> str:
        return f"http://127.0.0.1:{self.dashboard_port}"

    def start(self) -> None:
        ports = free_ports(6)
        worker_base = 20000 + (os.getpid() % 200) * 100
        cmd = [
            str(Path(sys.executable).parent / "ray"), "start", "--head",
            "--node-ip-address=127.0.0.1", "--dashboard-host=127.0.0.1",
            f"--port={self.gcs_port}", f"--dashboard-port={self.dashboard_port}",
            f"--metrics-export-port={self.metrics_port}",
            f"--node-manager-port={ports[0]}", f"--object-manager-port={ports[1]}",
            f"--ray-client-server-port={ports[2]}", f"--dashboard-agent-listen-port={ports[3]}",
            f"--dashboard-agent-grpc-port={ports[4]}", f"--runtime-env-agent-port={ports[5]}",
            f"--min-worker-port={worker_base}", f"--max-worker-port={worker_base + 99}",
            "--num-gpus=4", "--num-cpus=2", f"--temp-dir={self.temp_dir}",
            "--disable-usage-stats",
        ]  # fmt: skip
        subprocess.run(cmd, env=self.env, check=True, capture_output=True, timeout=180)
        self._wait(f"{self.dashboard_url}/api/version")

    def _wait(self, url: str, timeout_s: float = 90) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5):  # noqa: S310 - loopback
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def start_activity(self) -> None:
        """Run a driver that creates a placement group, a pending one, and actors, then waits."""
        script = textwrap.dedent(
            f"""
            import time, ray
            from ray.util.placement_group import placement_group
            ray.init(address="127.0.0.1:{self.gcs_port}")

            @ray.remote(num_cpus=0.1)
            class Worker:
                def ping(self):
                    return "pong"

            created = placement_group([{{"GPU": 1, "CPU": 0.2}}, {{"GPU": 1, "CPU": 0.2}}])
            ray.get(created.ready(), timeout=120)
            pending = placement_group([{{"GPU": 8}}], strategy="STRICT_PACK", name="too-big")
            workers = [Worker.remote() for _ in range(2)]
            ray.get([w.ping.remote() for w in workers])
            print("ready", flush=True)
            while True:
                time.sleep(1)
            """
        )
        self.driver = subprocess.Popen(
            [sys.executable, "-c", script],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line = self.driver.stdout.readline() if self.driver.stdout else ""
        if "ready" not in line:
            raise RuntimeError("the Ray driver did not create its placement groups and actors")

    def stop(self) -> None:
        if self.driver is not None:
            self.driver.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.driver.wait(timeout=20)
            if self.driver.poll() is None:
                self.driver.kill()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = pids_mentioning(self.temp_dir)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            if pids:
                time.sleep(3)


def new_head() -> RayHead:
    gcs, dashboard, metrics = free_ports(3)
    temp_dir = tempfile.mkdtemp(prefix="sp_ray_test_", dir="/tmp")
    env = dict(
        os.environ,
        RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
        RAY_USAGE_STATS_ENABLED="0",
        RAY_ADDRESS="",
    )
    env.pop("RAY_ADDRESS")
    return RayHead(temp_dir, gcs, dashboard, metrics, env)
