"""The engine's input: a plan spec with hardware already resolved into plain data (the value types
and the choices they accept).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.architecture import Architecture
from catalog.data import GpuVendor, load_gpus
from planner.engine.step_backend import StepBackend
from planner.engine.vllm_flags import VLLM_VERSION

WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "mxfp4")
# Formats vLLM only serves from a checkpoint stored that way (no load-time quantization).
CHECKPOINT_ONLY_DTYPES = ("mxfp4",)
KV_DTYPES = ("auto", "fp8")
TRAFFIC_SHAPES = ("steady", "diurnal", "bursty")
ARRIVALS = ("closed", "poisson", "burst")
INTRA_LINKS = ("nvlink", "nvswitch", "pcie")
# Nodes one spec may describe: more than any team fleet, few enough that evaluating stays
# within a second (100,000 nodes cost a viewer's request 5-14 CPU-seconds).
MAX_NODES = 1024
NIC_KINDS = ("ethernet", "roce", "infiniband")
NIC_ROLES = ("data", "management")
POOL_KINDS = ("dedicated", "shared")


class SpecError(ValueError):
    """A spec that cannot be planned; `errors` maps a field path to a message with its range."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSpec:
    """GPU figures: memory in GiB, HBM and NVLink in GB/s, compute in dense BF16 TFLOPS."""

    slug: str
    name: str
    memory_gib: float
    driver_visible_gib: float
    hbm_bandwidth_gbs: float
    bf16_dense_tflops: float
    fp8_support: bool
    nvlink_gbs: float
    vendor: GpuVendor = GpuVendor.NVIDIA  # decides vLLM's CUDA-graph rule (profiling.py)


def catalog_gpu(slug: str) -> GpuSpec:
    """Return the GPU catalog's `slug` as engine input (KeyError for an unknown slug)."""
    g = load_gpus()[slug]
    return GpuSpec(
        slug=g.slug,
        name=g.name,
        memory_gib=g.memory_gib,
        driver_visible_gib=g.driver_visible_gib,
        hbm_bandwidth_gbs=g.hbm_bandwidth_gbs,
        bf16_dense_tflops=g.bf16_dense_tflops,
        fp8_support=g.fp8_support,
        nvlink_gbs=g.nvlink_gbs,
        vendor=g.vendor,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Nic:
    name: str
    speed_gbps: float
    kind: str = "ethernet"
    role: str = "data"


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    hostname: str
    gpu: GpuSpec
    gpu_count: int
    intra_link: str = "nvlink"
    nics: tuple[Nic, ...] = ()
    free_gpus: int | None = None
    # GPU peer-to-peer access over PCIe, when the input says (None: the GPU's usual, see
    # network.pcie_p2p); vLLM's custom all-reduce runs on PCIe only with it.
    p2p: bool | None = None
    address: str = ""  # management address (IP or host name); the host name when empty
    # The kind of the pool the node belongs to, when nodes of several pools are offered; the
    # plan's pool kind is then that of the nodes it uses (plan.with_pool_kind_of).
    pool_kind: str | None = None

    @property
    def reach(self) -> str:
        """Return the address other nodes and the balancer use to reach this node."""
        return self.address or self.hostname

    @property
    def usable_gpus(self) -> int:
        """Return the GPUs a plan may use on this node (free GPUs in a shared pool)."""
        return self.gpu_count if self.free_gpus is None else min(self.free_gpus, self.gpu_count)

    @property
    def data_nic(self) -> Nic | None:
        """Return the fastest data NIC, or None."""
        data = [n for n in self.nics if n.role == "data"]
        return max(data, key=lambda n: (n.speed_gbps, n.name)) if data else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Hardware:
    nodes: tuple[Node, ...]
    pool_kind: str = "dedicated"


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    concurrency: int = 16
    avg_input_tokens: int = 1024
    avg_output_tokens: int = 256
    peak_qps: float | None = None
    traffic_shape: str = "steady"
    ttft_slo_ms: float | None = None
    itl_slo_ms: float | None = None
    shared_prefixes: bool = False
    # How requests arrive: `closed` keeps `concurrency` requests in flight (a benchmark's
    # --max-concurrency), `poisson` sends `request_rate_per_s` on average, `burst` sends
    # `burst_size` at once. Lengths are means with a standard deviation (0: fixed).
    arrival: str = "closed"
    request_rate_per_s: float | None = None
    burst_size: int | None = None
    input_tokens_sd: float = 0.0
    output_tokens_sd: float = 0.0
    shared_prefix_fraction: float = 0.0  # share of each prompt served from the prefix cache
    num_requests: int | None = None  # requests a prediction simulates (default: from the load)
    cached_requests: int = 0  # the first N prompts are already in the prefix cache (replays)


@dataclass(frozen=True, slots=True, kw_only=True)
class Operations:
    """The signals of DOMAIN.md §4 the user can tell us about."""

    models_change_often: bool = False
    multi_model_pool: bool = False
    self_healing_slo: bool = False
    ray_in_use: bool = False
    team_ray_experience: bool = False
    gateway_available: bool = False
    avoid_manual_nccl: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    tp: int
    pp: int = 1
    replicas: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkOverrides:
    """Measured figures that replace the defaults (bandwidth in GB/s, latency in µs)."""

    cross_node_bandwidth_gbs: float | None = None
    intra_node_bandwidth_gbs: float | None = None
    per_call_latency_us: float | None = None
    overlap_factor: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanSpec:
    model_name: str
    hf_repo: str
    architecture: Architecture
    weight_dtype: str
    pre_quantized: bool
    kv_cache_dtype: str
    max_model_len: int
    gpu_memory_utilization: float
    max_num_batched_tokens: int | None
    max_num_seqs: int | None
    workload: Workload
    hardware: Hardware
    operations: Operations
    pinned: Layout | None = None
    network: NetworkOverrides = NetworkOverrides()
    vllm_image: str = "vllm/vllm-openai:v0.32.0"
    model_slug: str = ""
    rope_scaling_factor: float = 1.0
    vllm_version: str = VLLM_VERSION
    # False when the input named no vLLM version: the bundled version's rules are assumed and
    # the plan says so (issue 32).
    vllm_version_stated: bool = True
    # What times the serving model's steps: the roofline, or measured kernel tables.
    step_backend: StepBackend = StepBackend.ROOFLINE
