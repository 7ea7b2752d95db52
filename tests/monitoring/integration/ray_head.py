"""Start a real Ray head (and worker nodes) on loopback for a test; stop exactly what it started.

Recipe of METRICS.md: RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 keeps Ray on 127.0.0.1; fake GPUs give
GPU resources (no utilization series: no driver); no Ray Serve (its replicas bind every
interface). Every port is picked free, so that concurrent runs do not collide.

Every process Ray starts inherits the environment variables below: the stop finds them by those
(and their descendants, see pids_mentioning), never another run's Ray.
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

import pytest


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


def _ephemeral_floor() -> int:
    """The first port the kernel hands out for bind(0); 32768 when the range cannot be read."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def worker_ports(role: str) -> tuple[int, int]:
    """This test process's block of Ray worker ports for a node `role` ("head" or "worker").

    The block lies below the kernel's ephemeral range, so it never overlaps the node's other
    ports (picked by free_ports from that range): Ray refuses to start when a component's port
    falls inside the worker range, which failed a CI run once (client port 39631 inside
    39600-39699). Head and worker blocks of one process are disjoint; processes differ by pid.
    """
    block = 240
    slots = max(1, (_ephemeral_floor() - 10000) // block)
    base = 10000 + (os.getpid() % slots) * block
    first = base if role == "head" else base + 120
    return first, first + 99


RUN_VARIABLE = "SERVEPLAN_RAY_TEST"  # the run's temp dir: every process of the cluster
NODE_VARIABLE = "SERVEPLAN_RAY_NODE"  # which node of the run a process belongs to


def _parents() -> dict[int, int]:
    """{pid: parent pid} of every process now."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def pids_mentioning(marker: str) -> list[int]:
    """Return the pids whose command line or environment contains `marker`, and their
    descendants: Ray's agents rename themselves (`ray::DashboardAgent`), which overwrites their
    command line and environment, but their parent (the raylet) keeps both."""
    needle = marker.encode()
    marked = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            found = needle in (entry / "cmdline").read_bytes()
            found = found or needle in (entry / "environ").read_bytes()
        except OSError:
            continue
        if found:
            marked.add(int(entry.name))
    parents = _parents()
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found_all, todo = set(), list(marked)
    while todo:
        pid = todo.pop()
        if pid not in found_all and pid != os.getpid():
            found_all.add(pid)
            todo.extend(children.get(pid, []))
    return sorted(found_all)


def kill_all(marker: str) -> None:
    """Stop every process marked `marker` and its descendants (TERM, then KILL for the rest).

    The list is taken once, before any is stopped: a stopped raylet's agents lose their parent.
    """
    pids = pids_mentioning(marker)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if pids and sig == signal.SIGTERM:
            time.sleep(3)


def _run_ray(cmd: list[str], env: dict[str, str]) -> None:
    """Run `ray start`; on failure, raise with Ray's own words (a bare exit status says nothing)."""
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-3000:]
        raise RuntimeError(f"`ray start` exited {done.returncode}:\n{tail}")


@dataclass
class RayHead:
    """A Ray head on `ip`. With `cluster`, other nodes may join (start_worker): every node then
    has a loopback address of its own (127.0.0.2, .3), since Ray rewrites 127.0.0.1 into the
    machine's own address for a joining node, and its servers listen on every interface."""

    temp_dir: str
    gcs_port: int
    dashboard_port: int
    metrics_port: int
    env: dict[str, str]
    driver: subprocess.Popen | None = None
    ip: str = "127.0.0.1"
    cluster: bool = False

    @property
    def dashboard_url(self) -> str:
        return f"http://{self.ip}:{self.dashboard_port}"

    def _node_env(self, name: str) -> dict[str, str]:
        return {
            **self.env,
            # 0 keeps a lone head on loopback; a node joins only when it is 1 (on every node).
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1" if self.cluster else "0",
            NODE_VARIABLE: f"{self.temp_dir}:{name}",
        }

    def start(self) -> None:
        ports = free_ports(6)
        first_worker, last_worker = worker_ports("head")
        cmd = [
            str(Path(sys.executable).parent / "ray"), "start", "--head",
            f"--node-ip-address={self.ip}", f"--dashboard-host={self.ip}",
            f"--port={self.gcs_port}", f"--dashboard-port={self.dashboard_port}",
            f"--metrics-export-port={self.metrics_port}",
            f"--node-manager-port={ports[0]}", f"--object-manager-port={ports[1]}",
            f"--ray-client-server-port={ports[2]}", f"--dashboard-agent-listen-port={ports[3]}",
            f"--dashboard-agent-grpc-port={ports[4]}", f"--runtime-env-agent-port={ports[5]}",
            f"--min-worker-port={first_worker}", f"--max-worker-port={last_worker}",
            "--num-gpus=4", "--num-cpus=2", f"--temp-dir={self.temp_dir}",
            "--disable-usage-stats",
        ]  # fmt: skip
        env = self._node_env("head")
        _run_ray(cmd, env)
        self._wait(f"{self.dashboard_url}/api/version")

    def start_worker(self, name: str, ip: str, *, num_gpus: int = 2, num_cpus: int = 1) -> int:
        """Join a worker node at `ip` to a `cluster` head; return its exporter port."""
        assert self.cluster, "a head started without cluster=True refuses other nodes"
        ports = free_ports(6)
        first_worker, last_worker = worker_ports("worker")
        cmd = [
            str(Path(sys.executable).parent / "ray"), "start",
            f"--address={self.ip}:{self.gcs_port}", f"--node-ip-address={ip}",
            f"--metrics-export-port={ports[0]}",
            f"--node-manager-port={ports[1]}", f"--object-manager-port={ports[2]}",
            f"--dashboard-agent-listen-port={ports[3]}", f"--dashboard-agent-grpc-port={ports[4]}",
            f"--runtime-env-agent-port={ports[5]}",
            f"--min-worker-port={first_worker}", f"--max-worker-port={last_worker}",
            f"--num-gpus={num_gpus}", f"--num-cpus={num_cpus}", "--disable-usage-stats",
        ]  # fmt: skip
        _run_ray(cmd, self._node_env(name))
        return ports[0]

    def kill_node(self, name: str) -> None:
        """Kill every process of one node at once, as a machine that loses power."""
        marker = f"{NODE_VARIABLE}={self.temp_dir}:{name}\0"  # NUL: the variable ends there
        for pid in pids_mentioning(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

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

    def start_activity(self, attempts: int = 2) -> None:
        """Run a driver that creates a placement group, a pending one, and actors, then waits.

        A driver that exits before it is ready is run once more: on a loaded two-core machine
        a Ray worker process can miss its start-up deadline, which is Ray's hiccup, not ours.
        The error names what the driver said (its log), not only that it failed."""
        for attempt in range(1, attempts + 1):
            log_path = Path(self.temp_dir) / f"driver-{attempt}.log"
            if self._run_driver(log_path):
                return
            self._stop_driver()
        tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
        raise RuntimeError(
            f"the Ray driver did not create its placement groups and actors "
            f"({attempts} tries); its last log:\n{tail}"
        )

    def _run_driver(self, log_path: Path) -> bool:
        script = textwrap.dedent(
            f"""
            import time, ray
            from ray.util.placement_group import placement_group
            ray.init(address="{self.ip}:{self.gcs_port}")

            @ray.remote(num_cpus=0.1)
            class Worker:
                def ping(self):
                    return "pong"

            created = placement_group([{{"GPU": 1, "CPU": 0.2}}, {{"GPU": 1, "CPU": 0.2}}])
            ray.get(created.ready(), timeout=120)
            pending = placement_group([{{"GPU": 8}}], strategy="STRICT_PACK", name="too-big")
            workers = [Worker.remote() for _ in range(2)]
            ray.get([w.ping.remote() for w in workers], timeout=180)
            print("ready", flush=True)
            while True:
                time.sleep(1)
            """
        )
        with log_path.open("w") as log:
            self.driver = subprocess.Popen(
                [sys.executable, "-c", script],
                env=self._node_env("driver"),
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        line = self.driver.stdout.readline() if self.driver.stdout else ""
        return "ready" in line

    def _stop_driver(self) -> None:
        if self.driver is None:
            return
        self.driver.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.driver.wait(timeout=20)
        if self.driver.poll() is None:
            self.driver.kill()
            self.driver.wait()
        # Its placement groups go with it (a driver's are freed when it exits).
        self.driver = None

    def stop(self) -> None:
        self._stop_driver()
        kill_all(f"{RUN_VARIABLE}={self.temp_dir}")
        kill_all(self.temp_dir)  # anything the environment did not reach


def require_ray() -> None:
    """Fail (never skip) a Ray test when Ray is not installed."""
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.fail("Ray is not installed: `.venv/bin/pip install -e '.[integration]'`")


def new_head(*, ip: str = "127.0.0.1", cluster: bool = False) -> RayHead:
    gcs, dashboard, metrics = free_ports(3)
    temp_dir = tempfile.mkdtemp(prefix="sp_ray_test_", dir="/tmp")
    env = dict(
        os.environ,
        RAY_USAGE_STATS_ENABLED="0",
        RAY_ADDRESS="",
        **{RUN_VARIABLE: temp_dir},
    )
    env.pop("RAY_ADDRESS")
    return RayHead(temp_dir, gcs, dashboard, metrics, env, ip=ip, cluster=cluster)
