"""What a poll reads besides /metrics, for read-only targets: what the series' labels carry is
read from them (vLLM's cache config and model names, Ray's GPU names and node addresses), what
they do not (max_model_len, Ray's dead nodes and pending groups' details) is said to be unknown
where it would appear, and the Ray node-lost alert works. Prometheus is a mock answering with
the label sets real exporters write (tests/monitoring/fixtures)."""

from __future__ import annotations

from urllib.parse import parse_qs

import httpx
import pytest

from monitoring import selectors, stores, tasks
from monitoring.models import AlertEvent, PollStatus
from monitoring.polling import run as polling
from monitoring.reality import observation
from monitoring.reality.server_checks import WarningCode, _target_warnings
from monitoring.series.readonly import ray as readonly_ray
from monitoring.series.readonly import vllm as readonly_vllm
from monitoring.series.readonly.reader import KEY_LABEL, ReadOnlyReader
from monitoring.stores.routing import RoutingStore
from tests.inventory.factories import MachineFactory
from tests.monitoring.factories import mock_prometheus_store

pytestmark = pytest.mark.django_db

SESSION = "session_2026-11-30_08-49-02_900352_7463"
# vllm:cache_config_info as vLLM writes it (labels of CacheConfig), with Prometheus' own labels.
CACHE_CONFIG = {
    "__name__": "vllm:cache_config_info",
    "job": "vllm",
    "instance": "10.0.0.5:8000",
    "block_size": "16",
    "cache_dtype": "fp8",
    "enable_prefix_caching": "True",
    "engine": "0",
    "gpu_memory_utilization": "0.9",
    "num_gpu_blocks": "21000",
    "num_cpu_blocks": "None",
}
RUNNING = {
    "__name__": "vllm:num_requests_running",
    "job": "vllm",
    "instance": "10.0.0.5:8000",
    "engine": "0",
    "model_name": "meta-llama/Llama-3.1-8B-Instruct",
}


def _ray_node(instance: str, ip: str, head: bool) -> dict[str, str]:
    # ray_node_* labels of Ray 2.60 (tests/monitoring/fixtures/ray/head_exporter_metrics_1.txt).
    return {
        "__name__": "ray_node_cpu_utilization",
        "job": "ray",
        "instance": instance,
        "IsHeadNode": "true" if head else "false",
        "RayNodeType": "head" if head else "worker",
        "SessionName": SESSION,
        "Version": "2.60.0",
        "ip": ip,
    }


def _ray_gpu(instance: str, index: str) -> dict[str, str]:
    # ray_node_gpus_available of Ray 2.49 (fixtures/ray/real_h200_worker_issue58228.txt).
    return {
        "__name__": "ray_node_gpus_available",
        "job": "ray",
        "instance": instance,
        "GpuDeviceName": "NVIDIA H200",
        "GpuIndex": index,
        "SessionName": SESSION,
        "ip": "10.0.0.12",
    }


def test_vllm_facts_come_from_the_cache_config_and_model_name_labels():
    second = {**CACHE_CONFIG, "engine": "1"}
    got = readonly_vllm.facts([CACHE_CONFIG, second, RUNNING, {**RUNNING, "engine": "1"}])

    assert got["cache_config"]["num_gpu_blocks"] == "21000"
    assert got["cache_config"]["engine"] == "0"
    assert not {"__name__", "job", "instance"} & set(got["cache_config"])
    assert got["engines"] == 2
    assert got["models"] == ["meta-llama/Llama-3.1-8B-Instruct"]
    assert readonly_vllm.facts([]) == {}


def test_ray_facts_come_from_the_gpu_and_node_gauges_labels():
    got = readonly_ray.facts(
        [
            _ray_node("ray-head:8080", "10.0.0.11", head=True),
            _ray_node("ray-worker-0:8080", "10.0.0.12", head=False),
            _ray_gpu("ray-worker-0:8080", "0"),
            _ray_gpu("ray-worker-0:8080", "1"),
        ]
    )

    assert got["gpus"] == {"ray-worker-0:8080": {"0": "NVIDIA H200", "1": "NVIDIA H200"}}
    assert got["sessions"] == [SESSION]
    assert [(n["exporter"], n["ip"], n["head"], n["state"]) for n in got["nodes"]] == [
        ("ray-head:8080", "10.0.0.11", True, ""),
        ("ray-worker-0:8080", "10.0.0.12", False, ""),
    ]


def _prometheus(values: dict[tuple[str, tuple[tuple[str, str], ...]], float], facts: list[dict]):
    """A mock Prometheus: the facts query gets `facts`, the values query `values`, the
    cache-config family query its label sets; `asked` records each query."""
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/status/buildinfo"):
            return httpx.Response(200, json={"status": "success", "data": {"version": "3.0.0"}})
        query = parse_qs(request.content.decode())["query"][0]
        asked.append(query)
        if query.startswith('{__name__=~"'):
            names = query.split('"', 2)[1].split("|")
            rows = [{"metric": m, "value": [0, "1"]} for m in facts if m["__name__"] in names]
        elif query.startswith("vllm:cache_config_info"):
            rows = [{"metric": m, "value": [0, "1"]} for m in facts if m is CACHE_CONFIG]
        else:
            rows = [
                {"metric": {KEY_LABEL: key, **dict(labels)}, "value": [0, repr(v)]}
                for (key, labels), v in values.items()
                if f'"{key}"' in query  # the keys the query asks for
            ]
        data = {"resultType": "vector", "result": rows}
        return httpx.Response(200, json={"status": "success", "data": data})

    return mock_prometheus_store(handler), asked


@pytest.fixture
def prometheus(monkeypatch, read_only_allowed):
    """Install a mock Prometheus as the reader of read-only targets: call it with the answers
    (the jobs vllm and ray are allowed)."""

    def install(values, facts):
        server, asked = _prometheus(values, facts)
        routing = RoutingStore(stores.current().polled, ReadOnlyReader(server))
        monkeypatch.setattr(stores, "current", lambda: routing)
        return asked

    return install


def test_a_read_only_vllm_target_keeps_its_cache_config_and_models(
    prometheus, make_target, viewer_client
):
    prometheus(
        {("poll.up", ()): 1.0, ("vllm.requests_running", ()): 3.0},
        [CACHE_CONFIG, RUNNING],
    )
    target = make_target(base_url="", selector='{job="vllm",instance="10.0.0.5:8000"}')

    polling.poll(target)
    target.refresh_from_db()

    assert target.last_status == PollStatus.OK
    served = observation.served_config(target)
    assert served.models == ("meta-llama/Llama-3.1-8B-Instruct",)
    assert (served.kv_blocks, served.block_size_tokens, served.cache_dtype) == (21000, 16, "fp8")
    assert served.gpu_memory_utilization == 0.9
    assert served.engines == 1
    assert (served.max_model_len, served.read_only) == (None, True)
    assert target.latest["vllm.kv_cache_blocks"] == 21000  # from the same labels

    page = viewer_client.get(target.get_absolute_url()).content.decode()
    assert "meta-llama/Llama-3.1-8B-Instruct" in page
    assert "a read-only target does not ask the server's /v1/models" in page
    assert "No capacity yet" not in page


def _observation(served: observation.ServedConfig) -> observation.TargetObservation:
    return observation.TargetObservation(
        target_id=1,
        target_name="watched",
        polls=10,
        concurrency=None,
        output_tok_s=None,
        ttft_p95_ms=None,
        itl_p95_ms=None,
        avg_input_tokens=None,
        avg_output_tokens=None,
        kv_capacity_tokens=None,
        served=served,
    )


class _Plan:
    """What the sanity checks read of a plan's values."""

    model_name = "Llama-3.1-8B-Instruct"
    hf_repo = "meta-llama/Llama-3.1-8B-Instruct"
    model_slug = "llama-3-1-8b-instruct"
    max_model_len = 8192
    kv_cache_dtype = "fp8"
    gpu_memory_utilization = 0.9
    replicas = 1

    class replica:  # noqa: N801
        block_size_tokens = 16

        class layout:  # noqa: N801
            tp = 1
            pp = 1


def _served(**changes) -> observation.ServedConfig:
    fields = {
        "models": ("meta-llama/Llama-3.1-8B-Instruct",),
        "max_model_len": None,
        "kv_blocks": 21000,
        "block_size_tokens": 16,
        "cache_dtype": "fp8",
        "gpu_memory_utilization": 0.9,
        "tensor_parallel_size": None,
        "pipeline_parallel_size": None,
        "engines": 1,
    }
    return observation.ServedConfig(**{**fields, **changes})


def test_plan_vs_reality_says_max_model_len_is_not_checked_for_a_read_only_target():
    codes = {
        w.code for w in _target_warnings(_Plan, _observation(_served(read_only=True)), whole=False)
    }
    assert codes == {WarningCode.MAX_MODEL_LEN_UNREAD}
    # Polled, a server without /v1/models' answer is not said to be read-only; one that
    # answered is checked as before.
    assert not _target_warnings(_Plan, _observation(_served()), whole=False)
    known = _served(read_only=True, max_model_len=4096)
    assert {w.code for w in _target_warnings(_Plan, _observation(known), whole=False)} == {
        WarningCode.MAX_MODEL_LEN_MISMATCH
    }


def test_a_read_only_ray_cluster_loses_a_node_and_says_what_it_cannot_show(
    prometheus, make_target, viewer_client
):
    a = MachineFactory(hostname="gpu-a", management_address="10.0.0.11", nics=[])
    b = MachineFactory(hostname="gpu-b", management_address="10.0.0.12", nics=[])
    # Only the worker's exporter is scraped (the head stopped answering); Prometheus names it
    # by a pod name, its `ip` label names the machine.
    prometheus(
        {
            ("poll.up", ()): 1.0,
            ("ray.cluster.nodes_scraped", ()): 1.0,
            ("ray.placement_groups", (("state", "PENDING"),)): 2.0,
            ("ray.node.cpu_utilization_pct", (("node", "ray-worker-0:8080"),)): 40.0,
        },
        [
            _ray_node("ray-worker-0:8080", "10.0.0.12", head=False),
            _ray_gpu("ray-worker-0:8080", "0"),
        ],
    )
    target = make_target(kind="ray", base_url="", selector='{job="ray"}', machines=[a, b])

    polling.poll(target, on_stored=tasks.alerts_evaluator(target))
    target.refresh_from_db()

    assert target.latest["ray.cluster.nodes_missing"] == 1.0
    assert AlertEvent.objects.filter(
        target=target, rule__series="ray.cluster.nodes_missing", resolved_at__isnull=True
    ).exists()
    state = selectors.ray_state(target)
    assert [n["name"] for n in state["nodes"]] == ["gpu-b"]  # by its ip, from the inventory
    assert state["missing_hosts"] == ["gpu-a"]
    assert (state["read_only"], state["pending_count"]) == (True, 2)
    assert state["gpu_names"] == {"ray-worker-0:8080": {"0": "NVIDIA H200"}}

    page = viewer_client.get(target.get_absolute_url()).content.decode()
    assert "data-read-only-nodes" in page
    assert 'data-pending-count="2"' in page
    assert "No placement group is pending." not in page
