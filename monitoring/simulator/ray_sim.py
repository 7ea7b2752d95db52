"""A simulated two-node Ray 2.60 cluster: per-node exporters (with GPU series) and dashboard JSON.

Names, label sets and JSON shapes follow a recorded Ray 2.60 head; the GPU series (which a fake
`--num-gpus` never produces) and Serve follow Ray's reporter agent and Serve metric definitions.
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.metrics_core import Metric

from .load import LoadModel

RAY_VERSION = "2.60.0"
OTEL = {
    "otel_scope_name": "ray._private.telemetry.open_telemetry_metric_recorder",
    "otel_scope_schema_url": "",
    "otel_scope_version": "",
}
SERVE_LATENCY_BUCKETS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 300, 400, 500, 1000, 2000, 5000,
                            10000, 60000, 120000, 300000, 600000)  # fmt: skip
GPU_NAME = "NVIDIA A100-SXM4-80GB"
GPU_MEMORY_MIB = 81920.0
APP, DEPLOYMENT = "llm", "VLLMDeployment"


@dataclass(slots=True)
class SimNode:
    index: int
    node_id: str
    port: int
    is_head: bool
    gpus_busy: int  # GPUs used by the model replica on this node
    replica: str


def _bucketize(bounds: tuple[float, ...], counts: list[float], value: float) -> None:
    for i, bound in enumerate(bounds):
        if value <= bound:
            counts[i] += 1
            return
    counts[-1] += 1


@dataclass(slots=True)
class SimRayCluster:
    """Cluster state, advanced lazily on every scrape of any of its endpoints."""

    exporter_ports: tuple[int, int]
    dashboard_port: int
    host: str = "127.0.0.1"
    base_rps: float = 3.0
    day_s: float = 1800.0
    seed: int = 42
    nodes: list[SimNode] = field(init=False)
    session: str = field(init=False)
    load: LoadModel = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: float = field(init=False)
    last: float = field(init=False)
    http_requests: dict[str, float] = field(init=False)
    replica_requests: dict[str, float] = field(init=False)
    http_latency: list[float] = field(init=False)
    http_latency_sum: float = 0.0
    processing: dict[str, list[float]] = field(init=False)
    processing_sum: dict[str, float] = field(init=False)
    load_now: float = 0.0
    ongoing: float = 0.0
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        now = time.time()
        stamp = time.strftime("%Y-%m-%d_%H-%M-%S", time.gmtime(now))
        self.session = f"session_{stamp}_{int(now * 1e6) % 1000000:06d}_1"
        self.nodes = [
            SimNode(0, f"{self._rng.getrandbits(224):056x}", self.exporter_ports[0], True, 4,
                    "llm#VLLMDeployment#a1b2c3"),
            SimNode(1, f"{self._rng.getrandbits(224):056x}", self.exporter_ports[1], False, 2,
                    "llm#VLLMDeployment#d4e5f6"),
        ]  # fmt: skip
        self.load = LoadModel(self.base_rps, day_s=self.day_s, seed=self.seed)
        self.started = self.last = now
        self.http_requests = {"200": 0.0, "500": 0.0}
        self.replica_requests = {n.replica: 0.0 for n in self.nodes}
        self.http_latency = [0.0] * (len(SERVE_LATENCY_BUCKETS_MS) + 1)
        self.processing = {
            n.replica: [0.0] * (len(SERVE_LATENCY_BUCKETS_MS) + 1) for n in self.nodes
        }
        self.processing_sum = {n.replica: 0.0 for n in self.nodes}

    # --- state ---
    def advance(self, now: float) -> None:
        dt = now - self.last
        if dt <= 0:
            return
        self.last = now
        n = self.load.arrivals(now, dt)
        self.load_now = min(1.0, self.load.rps(now) / (self.base_rps * 2))
        self.ongoing = round(self.load.rps(now) * 1.5)
        for _ in range(n):
            replica = self.nodes[self._rng.random() < 0.35].replica
            ms = self._rng.lognormvariate(math.log(400 + 800 * self.load_now), 0.5)
            status = "500" if self._rng.random() < 0.01 else "200"
            self.http_requests[status] += 1
            self.replica_requests[replica] += 1
            _bucketize(SERVE_LATENCY_BUCKETS_MS, self.http_latency, ms + 3)
            self.http_latency_sum += ms + 3
            _bucketize(SERVE_LATENCY_BUCKETS_MS, self.processing[replica], ms)
            self.processing_sum[replica] += ms

    def pending_group(self, now: float) -> bool:
        """Return whether the oversized placement group is pending (5 min out of every 10)."""
        return int((now - self.started) // 300) % 2 == 1

    # --- exporters ---
    def exporter(self, port: int, now: float) -> bytes:
        with self.lock:
            self.advance(now)
            node = next(n for n in self.nodes if n.port == port)
            return generate_latest(_NodeCollector(self, node, now))

    # --- dashboard ---
    def dashboard(self, path: str, now: float) -> tuple[int, bytes]:
        with self.lock:
            self.advance(now)
            route = path.split("?", 1)[0].rstrip("/")
            if route == "/api/prometheus/sd":
                targets = [f"{self.host}:{n.port}" for n in self.nodes]
                return 200, json.dumps([{"labels": {"job": "ray"}, "targets": targets}]).encode()
            if route == "/nodes" and "view=summary" in path:
                return 200, self._wrap("Node summary fetched.", self._nodes_summary(now))
            if route == "/api/v0/placement_groups":
                groups = self._placement_groups(now)
                body = {
                    "result": {
                        "total": len(groups),
                        "num_after_truncation": len(groups),
                        "num_filtered": len(groups),
                        "partial_failure_warning": "",
                        "warnings": None,
                        "result": groups,
                    }
                }
                return 200, self._wrap("", body)
            if route == "/api/cluster_status":
                return 200, self._wrap("Got cluster status.", self._cluster_status(now))
            if route == "/api/version":
                return 200, json.dumps(
                    {"version": "4", "ray_version": RAY_VERSION, "ray_commit": "sim",
                     "session_name": self.session}
                ).encode()  # fmt: skip
            return 404, b"404: Not Found"

    @staticmethod
    def _wrap(msg: str, data: object) -> bytes:
        return json.dumps({"result": True, "msg": msg, "data": data}).encode()

    def _nodes_summary(self, now: float) -> dict[str, object]:
        summary = []
        for n in self.nodes:
            summary.append(
                {
                    "hostname": f"gpu-node-{n.index}",
                    "ip": self.host,
                    "now": now,
                    "bootTime": self.started - 86400,
                    "cpu": 10 + 50 * self.load_now,
                    "cpus": [64, 32],
                    "mem": [540_000_000_000, 400_000_000_000, 25.9, 140_000_000_000],
                    "gpus": [
                        {
                            "index": i,
                            "name": GPU_NAME,
                            "utilizationGpu": self._gpu_util(n, i),
                            "memoryUsed": self._gpu_mem(n, i),
                            "memoryTotal": GPU_MEMORY_MIB,
                        }
                        for i in range(4)
                    ],  # fmt: skip
                    "raylet": {
                        "nodeId": n.node_id,
                        "nodeManagerAddress": self.host,
                        "nodeManagerHostname": f"gpu-node-{n.index}",
                        "metricsExportPort": n.port,
                        "isHeadNode": n.is_head,
                        "state": "ALIVE",
                        "resourcesTotal": {"CPU": 64.0, "GPU": 4.0, "memory": 4e11},
                    },
                }
            )
        return {"summary": summary, "nodeLogicalResources": {}}

    def _groups(self, now: float) -> list[tuple[str, str, str, list[dict[str, float]]]]:
        groups = [
            ("a" * 32 + "01000000", "llm-replica-0", "CREATED", [{"GPU": 1.0, "CPU": 1.0}] * 4),
            ("b" * 32 + "01000000", "llm-replica-1", "CREATED", [{"GPU": 1.0, "CPU": 1.0}] * 2),
        ]
        if self.pending_group(now):
            groups.append(("c" * 32 + "01000000", "llm-replica-2", "PENDING", [{"GPU": 8.0}]))
        return groups

    def _placement_groups(self, now: float) -> list[dict[str, object]]:
        out = []
        for pg_id, name, state, bundles in self._groups(now):
            out.append(
                {
                    "placement_group_id": pg_id,
                    "name": name,
                    "creator_job_id": "01000000",
                    "state": state,
                    "is_detached": False,
                    "bundles": [
                        {
                            "bundle_id": {"placement_group_id": pg_id, "bundle_index": i},
                            "node_id": "" if state == "PENDING" else self.nodes[0].node_id,
                            "unit_resources": b,
                            "label_selector": {},
                        }
                        for i, b in enumerate(bundles)
                    ],  # fmt: skip
                    "stats": {
                        "scheduling_state": "NO_RESOURCES" if state == "PENDING" else "FINISHED",
                        "scheduling_attempt": 3 if state == "PENDING" else 1,
                    },
                }
            )
        return out

    def _cluster_status(self, now: float) -> dict[str, object]:
        usage: dict[str, list[float]] = {"CPU": [14.0, 128.0], "GPU": [6.0, 8.0]}
        for pg_id, _name, state, bundles in self._groups(now):
            if state != "CREATED":
                continue
            gpus = sum(b.get("GPU", 0.0) for b in bundles)
            camel = "".join(part.capitalize() if part[:1].isalpha() else part
                            for part in _split_hex(pg_id))  # fmt: skip
            usage[f"GPUGroup{camel}"] = [gpus, gpus]
            usage[f"CPUGroup{camel}"] = [float(len(bundles)) / 2, float(len(bundles))]
        demand = [[{"bundles": [[{"GPU": 8.0}, 1]], "strategy": "STRICT_PACK"}, 1]]
        return {
            "autoscalingStatus": None,
            "autoscalingError": None,
            "clusterStatus": {
                "loadMetricsReport": {
                    "usage": usage,
                    "pgDemand": demand if self.pending_group(now) else [],
                    "resourceDemand": [],
                },
                "autoscalerReport": {"activeNodes": {}, "pendingNodes": [], "failedNodes": []},
            },
        }

    def _gpu_util(self, node: SimNode, gpu: int) -> float:
        if gpu >= node.gpus_busy:
            return 0.0
        return max(0.0, min(100.0, 20 + 75 * self.load_now + self._rng.uniform(-5, 5)))

    def _gpu_mem(self, node: SimNode, gpu: int) -> float:
        return 74_000.0 if gpu < node.gpus_busy else 3.0


def _split_hex(pg_id: str) -> list[str]:
    """Split like the dashboard's camel-casing does: runs of letters and runs of digits."""
    parts: list[str] = []
    for ch in pg_id:
        if parts and parts[-1][-1].isdigit() == ch.isdigit():
            parts[-1] += ch
        else:
            parts.append(ch)
    return parts


class _NodeCollector:
    def __init__(self, cluster: SimRayCluster, node: SimNode, now: float) -> None:
        self.c, self.node, self.now = cluster, node, now

    def _node_labels(self) -> dict[str, str]:
        return {
            "IsHeadNode": "true" if self.node.is_head else "false",
            "RayNodeType": "head" if self.node.is_head else "worker",
            "SessionName": self.c.session,
            "Version": RAY_VERSION,
            "ip": self.c.host,
            **OTEL,
        }

    def _gauge(self, name: str, doc: str, rows: list[tuple[dict[str, str], float]]) -> Metric:
        labels = sorted(rows[0][0]) if rows else []
        g = GaugeMetricFamily(name, doc, labels=labels)
        for row, value in rows:
            g.add_metric([row[k] for k in labels], value)
        return g

    def collect(self) -> Iterator[Metric]:
        c, node, rng = self.c, self.node, self.c._rng
        base = self._node_labels()
        util = 15 + 55 * c.load_now + rng.uniform(-3, 3)
        yield self._gauge(
            "ray_node_cpu_utilization", "Total CPU usage on a ray node", [(base, util)]
        )
        yield self._gauge(
            "ray_node_cpu_count", "Total CPUs available on a ray node", [(base, 64.0)]
        )
        total = 540_000_000_000.0
        used = total * (0.2 + 0.3 * c.load_now)
        yield self._gauge("ray_node_mem_used", "Memory usage on a ray node", [(base, used)])
        yield self._gauge("ray_node_mem_available", "Memory available on a ray node",
                          [(base, total - used)])  # fmt: skip
        yield self._gauge("ray_node_mem_total", "Total memory on a ray node", [(base, total)])
        gpus = []
        for i in range(4):
            # Ray's labels (a real 2.49 worker, tests/monitoring/fixtures/ray): no GpuUuid.
            gpus.append({**base, "GpuIndex": str(i), "GpuDeviceName": GPU_NAME})
        driver_glitch = rng.random() < 0.01
        yield self._gauge("ray_node_gpus_available", "Total GPUs available on a ray node",
                          [(g, 1.0) for g in gpus])  # fmt: skip
        yield self._gauge(
            "ray_node_gpus_utilization",
            "Total GPUs usage on a ray node",
            [(g, -1.0 if driver_glitch and i == 3 else c._gpu_util(node, i))
             for i, g in enumerate(gpus)],
        )  # fmt: skip
        yield self._gauge("ray_node_gram_used", "Total GPU RAM usage on a ray node",
                          [(g, c._gpu_mem(node, i)) for i, g in enumerate(gpus)])  # fmt: skip
        free = [(g, GPU_MEMORY_MIB - c._gpu_mem(node, i)) for i, g in enumerate(gpus)]
        yield self._gauge("ray_node_gram_available", "Total GPU RAM available on a ray node", free)
        raylet = {"Component": "raylet", "NodeAddress": c.host, "SessionName": c.session,
                  "Version": RAY_VERSION, "WorkerId": "", **OTEL}  # fmt: skip
        reserved = float(node.gpus_busy)
        rows = []
        for name, total_units, used_units in (
            ("GPU", 4.0, reserved),
            ("CPU", 64.0, reserved + 1.0),
            ("memory", 4e11, 8e10),
            ("object_store_memory", 1.2e11, 2e9 * (1 + c.load_now)),
        ):
            rows.append(({**raylet, "Name": name, "State": "USED"}, used_units))
            rows.append(({**raylet, "Name": name, "State": "AVAILABLE"}, total_units - used_units))
        yield self._gauge("ray_resources", "Logical Ray resources broken per state "
                          "{AVAILABLE, USED}", rows)  # fmt: skip
        if node.is_head:
            yield from self._head_families()
        yield from self._serve_families()

    def _head_families(self) -> Iterator[Metric]:
        c = self.c
        gcs = {"Component": "gcs_server", "NodeAddress": c.host, "SessionName": c.session,
               "Source": "gcs", "Version": RAY_VERSION, "WorkerId": "", **OTEL}  # fmt: skip
        pending = 1.0 if c.pending_group(self.now) else 0.0
        yield self._gauge(
            "ray_placement_groups",
            "Number of placement groups broken down by state.",
            [({**gcs, "State": "CREATED"}, 2.0), ({**gcs, "State": "PENDING"}, pending),
             ({**gcs, "State": "REMOVED"}, 0.0)],
        )  # fmt: skip
        actor = {"Component": "gcs_server", "JobId": "", "Name": "ServeReplica:llm:VLLMDeployment",
                 "NodeAddress": c.host, "SessionName": c.session, "Source": "gcs",
                 "Version": RAY_VERSION, **OTEL}  # fmt: skip
        executor = {**actor, "Component": "core_worker", "JobId": "02000000", "Source": "executor"}
        yield self._gauge(
            "ray_actors",
            "An actor can be in one of DEPENDENCIES_UNREADY, PENDING_CREATION, ALIVE, "
            "ALIVE_IDLE, ALIVE_RUNNING_TASKS, RESTARTING, or DEAD states.",
            [({**actor, "State": "ALIVE"}, 5.0), ({**actor, "State": "DEAD"}, 1.0),
             ({**actor, "State": "PENDING_CREATION"}, pending),
             ({**executor, "State": "ALIVE_RUNNING_TASKS"}, 2.0),
             ({**executor, "State": "ALIVE_IDLE"}, 3.0)],
        )  # fmt: skip
        task = {"Component": "core_worker", "IsRetry": "0", "JobId": "02000000",
                "Name": "VLLMDeployment.__call__", "NodeAddress": c.host,
                "SessionName": c.session, "Version": RAY_VERSION, **OTEL}  # fmt: skip
        owner, runner = {**task, "Source": "owner"}, {**task, "Source": "executor"}
        finished = float(int((self.now - c.started) * 2))  # ~2 calls a second since the start
        yield self._gauge(
            "ray_tasks",
            "Current number of tasks currently in a particular state.",
            [({**owner, "State": "FINISHED"}, finished),
             ({**owner, "State": "PENDING_NODE_ASSIGNMENT"}, pending),
             ({**runner, "State": "RUNNING"}, 4.0),
             ({**runner, "State": "SUBMITTED_TO_WORKER"}, 0.0)],
        )  # fmt: skip
        controller = {"Component": "core_worker", "SessionName": c.session,
                      "Version": RAY_VERSION, "WorkerId": "f" * 56, **OTEL}  # fmt: skip
        yield self._gauge(
            "ray_serve_deployment_replica_healthy",
            "Tracks healthy replicas.",
            [({**controller, "application": APP, "deployment": DEPLOYMENT, "replica": n.replica},
              1.0) for n in c.nodes],
        )  # fmt: skip
        yield self._gauge(
            "ray_serve_application_status",
            "Numeric status of application. 0=UNKNOWN, 1=DEPLOY_FAILED, 2=UNHEALTHY, "
            "3=NOT_STARTED, 4=DELETING, 5=DEPLOYING, 6=RUNNING.",
            [({**controller, "application": APP}, 6.0)],
        )
        yield self._gauge(
            "ray_serve_deployment_status",
            "Numeric status of deployment. 0=UNKNOWN, 1=DEPLOY_FAILED, 2=UNHEALTHY, "
            "3=UPDATING, 4=UPSCALING, 5=DOWNSCALING, 6=HEALTHY.",
            [({**controller, "application": APP, "deployment": DEPLOYMENT}, 6.0)],
        )
        proxy = {**controller, "WorkerId": "e" * 56}
        route = {"application": APP, "method": "POST", "route": "/v1"}
        counter = CounterMetricFamily(
            "ray_serve_num_http_requests",
            "The number of HTTP requests processed.",
            labels=sorted([*proxy, *route, "status_code"]),
        )
        for status, value in sorted(c.http_requests.items()):
            row = {**proxy, **route, "status_code": status}
            counter.add_metric([row[k] for k in sorted(row)], value)
        yield counter
        labels = {**proxy, **route, "status_code": "200"}
        yield self._histogram(
            "ray_serve_http_request_latency_ms",
            "The end-to-end latency of HTTP requests (measured from the Serve HTTP proxy).",
            labels, c.http_latency, c.http_latency_sum,
        )  # fmt: skip
        yield self._gauge(
            "ray_serve_num_ongoing_http_requests",
            "The number of ongoing requests in this HTTP Proxy.",
            [({**proxy, "node_id": self.node.node_id, "node_ip_address": c.host}, c.ongoing)],
        )

    def _serve_families(self) -> Iterator[Metric]:
        c, node = self.c, self.node
        replica = {"Component": "core_worker", "SessionName": c.session, "Version": RAY_VERSION,
                   "WorkerId": f"{node.index:x}" * 56, "application": APP,
                   "deployment": DEPLOYMENT, "replica": node.replica, **OTEL}  # fmt: skip
        row = {**replica, "route": "/v1"}
        counter = CounterMetricFamily(
            "ray_serve_deployment_request_counter",
            "The number of queries that have been processed in this replica.",
            labels=sorted(row),
        )
        counter.add_metric([row[k] for k in sorted(row)], c.replica_requests[node.replica])
        yield counter
        yield self._histogram(
            "ray_serve_deployment_processing_latency_ms",
            "The latency for queries to be processed.",
            row, c.processing[node.replica], c.processing_sum[node.replica],
        )  # fmt: skip
        busy = round(c.ongoing * (0.65 if node.is_head else 0.35))
        yield self._gauge(
            "ray_serve_replica_processing_queries",
            "The current number of queries being processed.",
            [(replica, float(busy))],
        )

    @staticmethod
    def _histogram(
        name: str, doc: str, labels: dict[str, str], counts: list[float], total: float
    ) -> Metric:
        keys = sorted(labels)
        fam = HistogramMetricFamily(name, doc, labels=keys)
        cumulative, buckets = 0.0, []
        for bound, count in zip((*SERVE_LATENCY_BUCKETS_MS, math.inf), counts, strict=True):
            cumulative += count
            buckets.append(("+Inf" if math.isinf(bound) else repr(float(bound)), cumulative))
        fam.add_metric([labels[k] for k in keys], buckets, total)
        return fam
