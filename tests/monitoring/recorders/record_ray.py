"""Record real Ray payloads (exporter /metrics and dashboard JSON) as test fixtures.

Starts a Ray head on loopback only (see /work/shared/METRICS.md), creates placement groups and
actors from a driver so that their metric families appear, captures every endpoint the scraper
reads, then stops exactly the processes it started (found by an environment variable, ended by pid).

Run: .venv/bin/python tests/monitoring/recorders/record_ray.py [OUT_DIR]
Needs the `integration` extra (ray[default]). Ray Serve is deliberately not started: its
replicas listen on every interface.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # run as a script from anywhere
from tests.monitoring.integration.ray_head import RUN_VARIABLE, kill_all  # noqa: E402

GCS_PORT = 46379
DASHBOARD_PORT = 48265
METRICS_PORT = 48080
EXTRA_PORTS = [
    "--node-manager-port=46380",
    "--object-manager-port=46381",
    "--ray-client-server-port=46382",
    "--dashboard-agent-listen-port=46383",
    "--dashboard-agent-grpc-port=46384",
    "--runtime-env-agent-port=46385",
    "--min-worker-port=46400",
    "--max-worker-port=46499",
]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as resp:  # noqa: S310 - loopback only
        return resp.read()


def _wait_for(url: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            _get(url)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def main() -> None:
    out = Path(
        sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent / "fixtures" / "ray"
    )
    out.mkdir(parents=True, exist_ok=True)
    temp_dir = tempfile.mkdtemp(prefix="sp_ray_rec_", dir="/tmp")
    env = dict(
        os.environ,
        RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
        RAY_USAGE_STATS_ENABLED="0",
        **{RUN_VARIABLE: temp_dir},  # every Ray process inherits it: the stop finds them by it
    )
    ray_bin = str(Path(sys.executable).parent / "ray")
    cmd = [
        ray_bin, "start", "--head",
        "--node-ip-address=127.0.0.1", "--dashboard-host=127.0.0.1",
        f"--port={GCS_PORT}", f"--dashboard-port={DASHBOARD_PORT}",
        f"--metrics-export-port={METRICS_PORT}",
        "--num-gpus=4", "--num-cpus=2", f"--temp-dir={temp_dir}", "--disable-usage-stats",
        *EXTRA_PORTS,
    ]  # fmt: skip
    print("starting:", " ".join(cmd), flush=True)
    subprocess.run(cmd, env=env, check=True)
    try:
        os.environ.update(env)
        import ray
        from ray.util.placement_group import placement_group

        ray.init(address=f"127.0.0.1:{GCS_PORT}")

        @ray.remote(num_cpus=0.1)
        class Worker:
            def ping(self) -> str:
                return "pong"

        @ray.remote(num_cpus=0.1)
        def square(x: int) -> int:
            return x * x

        created = placement_group([{"GPU": 1, "CPU": 0.2}, {"GPU": 1, "CPU": 0.2}], strategy="PACK")
        ray.get(created.ready(), timeout=60)
        # Infeasible on a 4-GPU node: stays PENDING with a scheduling_state that says why.
        pending = placement_group([{"GPU": 8}], strategy="STRICT_PACK", name="too-big")
        workers = [Worker.remote() for _ in range(3)]
        in_pg = Worker.options(
            scheduling_strategy=ray.util.scheduling_strategies.PlacementGroupSchedulingStrategy(
                placement_group=created
            )
        ).remote()
        ray.get([w.ping.remote() for w in [*workers, in_pg]])
        doomed = Worker.remote()
        ray.get(doomed.ping.remote())
        ray.kill(doomed)
        stuck = Worker.options(num_gpus=16).remote()  # never scheduled: PENDING_CREATION
        ray.get([square.remote(i) for i in range(50)])
        print("activity created; waiting for metrics", flush=True)
        base = f"http://127.0.0.1:{DASHBOARD_PORT}"
        _wait_for(f"{base}/api/version")
        time.sleep(20)
        captures = {
            "dashboard_prometheus_sd.json": "/api/prometheus/sd",
            "dashboard_nodes_summary.json": "/nodes?view=summary",
            "dashboard_placement_groups.json": "/api/v0/placement_groups?detail=1",
            "dashboard_cluster_status.json": "/api/cluster_status",
            "dashboard_version.json": "/api/version",
        }
        for name, path in captures.items():
            body = _get(base + path)
            (out / name).write_text(json.dumps(json.loads(body), indent=1, sort_keys=True) + "\n")
            print("captured", name, len(body), flush=True)
        (out / "head_exporter_metrics_1.txt").write_bytes(
            _get(f"http://127.0.0.1:{METRICS_PORT}/metrics")
        )
        # A second scrape later so rates can be derived from two real snapshots.
        ray.get([square.remote(i) for i in range(50)])
        time.sleep(16)
        (out / "head_exporter_metrics_2.txt").write_bytes(
            _get(f"http://127.0.0.1:{METRICS_PORT}/metrics")
        )
        sd = json.loads((out / "dashboard_prometheus_sd.json").read_text())
        for group in sd:
            for target in group.get("targets", []):
                port = target.rsplit(":", 1)[1]
                if port != str(METRICS_PORT):
                    body = _get(f"http://{target}/metrics")
                    (out / f"exporter_{port}_metrics.txt").write_bytes(body)
                    print("captured exporter", target, len(body), flush=True)
        for name in sorted(out.iterdir()):
            print(name.name, name.stat().st_size)
        del workers, in_pg, stuck, pending
        ray.shutdown()
    finally:
        kill_all(f"{RUN_VARIABLE}={temp_dir}")
        kill_all(temp_dir)
        print("stopped processes under", temp_dir, flush=True)


if __name__ == "__main__":
    main()
