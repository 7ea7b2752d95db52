"""HTTP servers of the simulator (stdlib, threads) and the list of targets they serve.

Layout, from one base port P on 127.0.0.1 (P = 0 picks free ports):
- P: every simulated vLLM server under a path prefix: `http://127.0.0.1:P/vllm/<name>` is the
  target's base URL (`/metrics`, `/health`, `/version`, `/v1/models` below it, and the OpenAI
  API: POST `/v1/completions`, `/v1/chat/completions`, `/tokenize`); every simulated
  machine's dcgm-exporter at `http://127.0.0.1:P/dcgm/<hostname>` (`/metrics` below it);
  `GET /` lists all targets as JSON.
- P+1: the Ray dashboard (`/api/prometheus/sd`, `/nodes?view=summary`,
  `/api/v0/placement_groups?detail=1`, `/api/cluster_status`, `/api/version`).
- P+2, P+3: the two Ray node exporters (`/metrics`), as the dashboard's discovery lists them.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from dataclasses import asdict, dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import openai_api
from .aio_server import AsyncHttpServer
from .dcgm_sim import DEMO_GPU_MACHINES, SimDcgm, fleet_profile
from .ray_sim import SimRayCluster
from .serving import SimHardware
from .vllm_sim import SimVllm, VllmProfile

DEFAULT_PORT = 9400
# The OpenAI API's timings come from the serving model for each server's hardware; the demo's
# servers run somewhat slower than modelled, as real ones do, so a benchmark has a deviation
# to show and calibration something to correct.
DEMO_PROFILES = (
    VllmProfile(name="llama-8b", model="meta-llama/Llama-3.1-8B-Instruct", base_rps=3.0,
                max_num_seqs=128, num_gpu_blocks=12000, seed=1,
                hardware=SimHardware(model_slug="llama-3.1-8b", gpu="a100-80g-sxm", tp=1,
                                     decode_slowdown=1.15, prefill_slowdown=1.1)),
    VllmProfile(name="qwen-32b", model="Qwen/Qwen2.5-32B-Instruct", base_rps=1.2,
                max_num_seqs=64, num_gpu_blocks=5200, itl_s=0.045, restart_every_s=600.0,
                seed=2,
                hardware=SimHardware(model_slug="qwen2.5-32b", gpu="a800-80g-sxm", tp=2,
                                     decode_slowdown=1.1, prefill_slowdown=1.2)),
    VllmProfile(name="mistral-7b", model="mistralai/Mistral-7B-Instruct-v0.3", base_rps=2.0,
                max_num_seqs=96, num_gpu_blocks=14000, slow_probability=0.08, seed=3,
                hardware=SimHardware(model_slug="mistral-7b", gpu="a100-80g-sxm", tp=1,
                                     decode_slowdown=1.05, prefill_slowdown=1.05)),
)  # fmt: skip
FLEET_MODELS = tuple(p.model for p in DEMO_PROFILES)


@dataclass(frozen=True, slots=True)
class SimTarget:
    """One target a poller can register: kind (vllm, ray, gpu), base URL, display name.

    A gpu target's `name` is the host name of the machine it simulates.
    """

    kind: str
    base_url: str
    name: str
    note: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A poller that timed out or closed a keep-alive connection is normal here.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


def _handler(route: Any) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self._answer(*route(self.path))

        def _answer(self, status: int, content_type: str, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the poller gave up (timeout): nothing to do

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

    return Handler


PROM = "text/plain; version=1.0.0; charset=utf-8"
JSON = "application/json"


class Simulator:
    """Serve `vllm_count` vLLM servers and (optionally) a two-node Ray cluster in threads.

    The first three vLLM servers are the demo set: a steady one, one that restarts every 10 min
    (counters reset, 503 while down) and one that is occasionally slow (answers after 12 s).
    Further servers (for load tests) are steady and cycle through the same models.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        vllm_count: int = 3,
        ray: bool = True,
        gpu_machines: int | None = None,
        gpu_offset: int = 0,
        day_s: float = 1800.0,
        faults: bool = True,
        seed: int = 0,
        time_scale: float = 1.0,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the simulator only listens on loopback")
        self.host = host
        self.port = port
        self.faults = faults
        self.day_s = day_s
        self.vllm: dict[str, SimVllm] = {}
        rng = random.Random(seed)
        for i in range(vllm_count):
            if i < len(DEMO_PROFILES):
                demo = DEMO_PROFILES[i]
                profile = replace(demo, seed=demo.seed + seed)
                if not faults:
                    profile.restart_every_s = None
                    profile.slow_probability = 0.0
            else:
                profile = VllmProfile(
                    name=f"vllm-{i:03d}",
                    model=FLEET_MODELS[i % len(FLEET_MODELS)],
                    base_rps=rng.uniform(0.5, 4.0),
                    seed=seed * 1000 + i,
                    hardware=DEMO_PROFILES[i % len(DEMO_PROFILES)].hardware,
                )
            if profile.hardware is not None and time_scale != 1.0:
                # A load test's server answers faster than the modelled one (bench/).
                hw = profile.hardware
                profile = replace(profile, hardware=replace(
                    hw, decode_slowdown=hw.decode_slowdown * time_scale,
                    prefill_slowdown=hw.prefill_slowdown * time_scale))  # fmt: skip
            self.vllm[profile.name] = SimVllm(profile, day_s=day_s)
        # The demo fleet's machines first, then 8-GPU load-test machines; None: the demo fleet.
        count = len(DEMO_GPU_MACHINES) if gpu_machines is None else gpu_machines
        profiles = [
            DEMO_GPU_MACHINES[i] if i < len(DEMO_GPU_MACHINES) else fleet_profile(i)
            for i in range(gpu_offset, gpu_offset + count)
        ]
        self.gpus: dict[str, SimDcgm] = {
            p.hostname: SimDcgm(p, day_s=day_s, seed=seed) for p in profiles
        }
        self.with_ray = ray
        self.ray: SimRayCluster | None = None
        self._main: AsyncHttpServer | None = None  # port P: vLLM servers and GPU exporters
        self._servers: list[_Server] = []
        self._threads: list[threading.Thread] = []
        self._rng = random.Random(seed)

    # --- routes ---
    def _vllm_route(self, path: str) -> tuple[int, str, bytes]:
        if path in ("/", ""):
            return 200, JSON, json.dumps([t.as_dict() for t in self.targets()]).encode()
        parts = path.split("?", 1)[0].strip("/").split("/", 2)
        if len(parts) == 3 and parts[0] == "dcgm" and parts[1] in self.gpus:
            if parts[2] != "metrics":
                return 404, "text/plain", b"404 page not found"
            return (
                200,
                "text/plain; version=0.0.4; charset=utf-8",
                self.gpus[parts[1]].metrics(time.time()),
            )
        if len(parts) < 3 or parts[0] != "vllm" or parts[1] not in self.vllm:
            return 404, JSON, b'{"detail":"Not Found"}'
        sim, endpoint = self.vllm[parts[1]], "/" + parts[2]
        now = time.time()
        if sim.is_down(now):
            return 503, "text/plain", b"restarting"
        if endpoint == "/metrics":
            p = sim.profile
            if p.slow_probability and self._rng.random() < p.slow_probability:
                time.sleep(p.slow_delay_s)
            return 200, PROM, sim.metrics(time.time())
        if endpoint == "/health":
            return 200, JSON, b""
        if endpoint == "/version":
            return 200, JSON, sim.version()
        if endpoint == "/v1/models":
            return 200, JSON, sim.models()
        return 404, JSON, b'{"detail":"Not Found"}'

    def _vllm_post(self, path: str, body: bytes) -> tuple[int, str, openai_api.Body]:
        parts = path.split("?", 1)[0].strip("/").split("/", 2)
        if len(parts) < 3 or parts[0] != "vllm" or parts[1] not in self.vllm:
            return 404, JSON, b'{"detail":"Not Found"}'
        sim = self.vllm[parts[1]]
        if sim.is_down(time.time()):
            return 503, "text/plain", b"restarting"
        answer = openai_api.handle(sim, "/" + parts[2], body)
        return answer if answer is not None else (404, JSON, b'{"detail":"Not Found"}')

    def _dashboard_route(self, path: str) -> tuple[int, str, bytes]:
        assert self.ray is not None
        status, body = self.ray.dashboard(path, time.time())
        return status, JSON if status == 200 else "text/plain", body

    def _exporter_route(self, port: int) -> Any:
        def route(path: str) -> tuple[int, str, bytes]:
            assert self.ray is not None
            if path.split("?", 1)[0] != "/metrics":
                return 404, "text/plain", b"404: Not Found"
            return (
                200,
                "text/plain; version=0.0.4; charset=utf-8",
                self.ray.exporter(port, time.time()),
            )

        return route

    # --- lifecycle ---
    def _serve(self, port: int, route: Any) -> _Server:
        server = _Server((self.host, port), _handler(route))
        thread = threading.Thread(
            target=server.serve_forever, name=f"sim-{server.server_address[1]}", daemon=True
        )
        thread.start()
        self._servers.append(server)
        self._threads.append(thread)
        return server

    def start(self) -> list[SimTarget]:
        """Bind and serve; return the targets. Raises OSError when a port is taken."""
        try:
            # A fixed base port takes the block above it; port 0 lets the OS pick every port
            # (decided before self.port becomes the picked one: P+1.. may belong to others).
            step = 0 if self.port == 0 else 1
            self._main = AsyncHttpServer(self.host, self.port, self._vllm_route,
                                         self._vllm_post, openai_api.MAX_BODY_BYTES)  # fmt: skip
            self.port = self._main.start()
            if self.with_ray:
                dash = self._serve(self.port + step if step else 0, lambda p: (500, "", b""))
                exporters = [
                    self._serve(self.port + 2 * step if step else 0, lambda p: (500, "", b"")),
                    self._serve(self.port + 3 * step if step else 0, lambda p: (500, "", b"")),
                ]
                ports = tuple(s.server_address[1] for s in exporters)
                self.ray = SimRayCluster(
                    exporter_ports=(ports[0], ports[1]),
                    dashboard_port=dash.server_address[1],
                    host=self.host,
                    day_s=self.day_s,
                )
                dash.RequestHandlerClass = _handler(self._dashboard_route)
                for server, port in zip(exporters, ports, strict=True):
                    server.RequestHandlerClass = _handler(self._exporter_route(port))
        except OSError:
            self.stop()
            raise
        return self.targets()

    def stop(self) -> None:
        if self._main is not None:
            self._main.stop()
            self._main = None
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()
        self._threads.clear()

    def __enter__(self) -> Simulator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def targets(self) -> list[SimTarget]:
        """Return every target this simulator serves (what `make run` registers)."""
        out = []
        for name, sim in self.vllm.items():
            p = sim.profile
            note = p.model
            if p.restart_every_s:
                note += f"; restarts every {p.restart_every_s:g} s"
            if p.slow_probability:
                note += f"; {p.slow_probability:.0%} of scrapes take {p.slow_delay_s:g} s"
            out.append(SimTarget("vllm", f"http://{self.host}:{self.port}/vllm/{name}", name, note))
        for hostname, exporter in self.gpus.items():
            machine = exporter.profile
            out.append(
                SimTarget(
                    "gpu",
                    f"http://{self.host}:{self.port}/dcgm/{hostname}",
                    hostname,
                    f"dcgm-exporter, {machine.gpu_count} x {machine.model}",
                )
            )
        # Before start() a fixed base port already says where the dashboard will be (P + 1).
        dashboard_port = self.ray.dashboard_port if self.ray is not None else None
        if dashboard_port is None and self.with_ray and self.port:
            dashboard_port = self.port + 1
        if dashboard_port is not None:
            out.append(
                SimTarget(
                    "ray",
                    f"http://{self.host}:{dashboard_port}",
                    "sim-ray",
                    "two nodes x 4 GPUs, Ray Serve app 'llm'",
                )
            )
        return out
