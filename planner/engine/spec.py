"""The engine's input: a plan spec with hardware already resolved into plain data."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from catalog import identifiers
from catalog.architecture import Architecture, ArchitectureError
from catalog.architecture_json import config_only_values
from catalog.bounds import (
    GPU_BANDWIDTH_GBS_MAX,
    GPU_MEMORY_GIB_MAX,
    GPU_TFLOPS_MAX,
    GPUS_PER_NODE_MAX,
    NIC_SPEED_GBPS_MAX,
)
from catalog.data import GpuVendor, load_gpus, load_models
from catalog.hf_config import from_hf_config
from catalog.quantization import parse_quantization
from planner.engine.profiling import VersionError, parse_version
from planner.engine.step_backend import STEP_BACKENDS, StepBackend
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
    # layouts.pcie_p2p); vLLM's custom all-reduce runs on PCIe only with it.
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


# ---------------------------------------------------------------- parsing


class _Reader:
    """Collect every field error instead of stopping at the first."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def get(self, d: Mapping[str, Any], key: str, path: str, default: Any = None) -> Any:
        return d.get(key, default) if isinstance(d, Mapping) else default

    def integer(
        self, d: Mapping[str, Any], key: str, path: str, lo: int, hi: int, default: int | None
    ) -> int | None:
        value = d.get(key, default)
        if value is None:
            if default is None and key in d:
                return None
            if default is None:
                return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            self.errors[path] = f"must be an integer between {lo} and {hi}"
            return default
        if not lo <= int(value) <= hi:
            self.errors[path] = f"must be between {lo} and {hi}, got {value}"
            return default
        return int(value)

    def number(
        self,
        d: Mapping[str, Any],
        key: str,
        path: str,
        *,
        gt: float,
        le: float,
        default: float | None,
    ) -> float | None:
        value = d.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.errors[path] = f"must be a number in ({gt}, {le}]"
            return default
        if not gt < float(value) <= le:
            self.errors[path] = f"must be in ({gt}, {le}], got {value}"
            return default
        return float(value)

    def choice(
        self, d: Mapping[str, Any], key: str, path: str, choices: tuple[str, ...], default: str
    ) -> str:
        value = d.get(key, default)
        if value not in choices:
            self.errors[path] = f"must be one of {', '.join(choices)}, got {value!r}"
            return default
        return str(value)

    def boolean(self, d: Mapping[str, Any], key: str, path: str, default: bool = False) -> bool:
        value = d.get(key, default)
        if not isinstance(value, bool):
            self.errors[path] = "must be true or false"
            return default
        return value

    def mapping(self, d: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
        value = d.get(key, {})
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.errors[path] = "must be an object"
            return {}
        return value


def _gpu(r: _Reader, raw: Any, path: str) -> GpuSpec | None:
    gpus = load_gpus()
    if isinstance(raw, str):
        raw = {"slug": raw}
    if not isinstance(raw, Mapping):
        r.errors[path] = "must be a GPU slug or an object with the GPU figures"
        return None
    base = gpus.get(str(raw.get("slug", "")))
    if base is None and "memory_gib" not in raw:
        r.errors[f"{path}.slug"] = (
            f"unknown GPU slug {raw.get('slug')!r}; known: {', '.join(sorted(gpus))}"
        )
        return None
    mem = r.number(
        raw,
        "memory_gib",
        f"{path}.memory_gib",
        gt=0,
        le=GPU_MEMORY_GIB_MAX,
        default=base.memory_gib if base else None,
    )
    if mem is None:
        r.errors[f"{path}.memory_gib"] = f"required, a number in (0, {GPU_MEMORY_GIB_MAX:g}]"
        return None
    visible_default = base.driver_visible_gib if base else round(mem * 0.99, 2)
    visible = r.number(
        raw,
        "driver_visible_gib",
        f"{path}.driver_visible_gib",
        gt=0,
        le=GPU_MEMORY_GIB_MAX,
        default=visible_default,
    )
    hbm = r.number(
        raw,
        "hbm_bandwidth_gbs",
        f"{path}.hbm_bandwidth_gbs",
        gt=0,
        le=GPU_BANDWIDTH_GBS_MAX,
        default=base.hbm_bandwidth_gbs if base else 1000.0,
    )
    tflops = r.number(
        raw,
        "bf16_dense_tflops",
        f"{path}.bf16_dense_tflops",
        gt=0,
        le=GPU_TFLOPS_MAX,
        default=base.bf16_dense_tflops if base else 100.0,
    )
    nvlink = raw.get("nvlink_gbs", base.nvlink_gbs if base else 0.0)
    if (
        isinstance(nvlink, bool)
        or not isinstance(nvlink, int | float)
        or not 0 <= nvlink <= GPU_BANDWIDTH_GBS_MAX
    ):
        r.errors[f"{path}.nvlink_gbs"] = (
            f"must be a number in [0, {GPU_BANDWIDTH_GBS_MAX:g}] (0 for PCIe-only)"
        )
        nvlink = 0.0
    vendor_raw = raw.get("vendor", base.vendor if base else GpuVendor.NVIDIA)
    try:
        vendor = GpuVendor(vendor_raw)
    except ValueError:
        known = ", ".join(v.value for v in GpuVendor)
        r.errors[f"{path}.vendor"] = f"unknown GPU vendor {vendor_raw!r}; known: {known}"
        vendor = GpuVendor.NVIDIA
    return GpuSpec(
        slug=str(raw.get("slug", base.slug if base else "custom")),
        name=str(raw.get("name", base.name if base else raw.get("slug", "custom GPU"))),
        memory_gib=mem,
        driver_visible_gib=visible or mem * 0.99,
        hbm_bandwidth_gbs=hbm or 1000.0,
        bf16_dense_tflops=tflops or 100.0,
        fp8_support=bool(raw.get("fp8_support", base.fp8_support if base else False)),
        nvlink_gbs=float(nvlink),
        vendor=vendor,
    )


def _nodes(r: _Reader, hw: Mapping[str, Any]) -> tuple[Node, ...]:
    raw_nodes = hw.get("nodes")
    if raw_nodes is None and "node_count" in hw:
        n_nodes = r.integer(hw, "node_count", "hardware.node_count", 1, MAX_NODES, 1) or 1
        nic = {
            "name": hw.get("data_nic", "eth0"),
            "speed_gbps": hw.get("inter_node_gbps", 25),
            "kind": hw.get("inter_node_kind", "ethernet"),
            "role": "data",
        }
        template = {
            "gpu": hw.get("gpu"),
            "gpu_count": hw.get("gpus_per_node"),
            "intra_link": hw.get("intra_link", "nvlink"),
            "nics": [nic],
        }
        if "free_gpus_per_node" in hw:
            template["free_gpus"] = hw["free_gpus_per_node"]
        if "p2p" in hw:
            template["p2p"] = hw["p2p"]
        raw_nodes = [dict(template, hostname=f"node-{i + 1}") for i in range(n_nodes)]
    if not isinstance(raw_nodes, list) or not 1 <= len(raw_nodes) <= MAX_NODES:
        r.errors["hardware.nodes"] = f"a list of 1 to {MAX_NODES} nodes is required"
        return ()
    nodes: list[Node] = []
    seen: set[str] = set()
    gpu_cache: dict[str, GpuSpec | None] = {}
    for i, raw in enumerate(raw_nodes):
        path = f"hardware.nodes[{i}]"
        if not isinstance(raw, Mapping):
            r.errors[path] = "must be an object"
            continue
        hostname = str(raw.get("hostname") or f"node-{i + 1}")
        if not identifiers.is_hostname(hostname):
            r.errors[f"{path}.hostname"] = (
                f"{hostname!r} is not an RFC 1123 host name (labels of 1-63 letters, digits or "
                "hyphens separated by dots, 253 characters at most)"
            )
        elif hostname in seen:
            r.errors[f"{path}.hostname"] = f"duplicate hostname {hostname!r}"
        seen.add(hostname)
        address = str(raw.get("address") or raw.get("management_address") or "")
        if address and not identifiers.is_address(address):
            r.errors[f"{path}.address"] = (
                f"{address!r} must be an IPv4/IPv6 address or an RFC 1123 host name"
            )
        graw = raw.get("gpu")
        key = graw if isinstance(graw, str) else None
        if key is not None and key in gpu_cache:
            gpu = gpu_cache[key]
        else:
            gpu = _gpu(r, graw, f"{path}.gpu")
            if key is not None:
                gpu_cache[key] = gpu
        count: int | None = r.integer(
            raw, "gpu_count", f"{path}.gpu_count", 1, GPUS_PER_NODE_MAX, None
        )
        if count is None:
            r.errors.setdefault(
                f"{path}.gpu_count", f"required, an integer between 1 and {GPUS_PER_NODE_MAX}"
            )
        link = r.choice(raw, "intra_link", f"{path}.intra_link", INTRA_LINKS, "nvlink")
        nics: list[Nic] = []
        raw_nics = raw.get("nics") or []
        if not isinstance(raw_nics, list):
            r.errors[f"{path}.nics"] = "must be a list of NIC objects"
            raw_nics = []
        for j, nraw in enumerate(raw_nics):
            npath = f"{path}.nics[{j}]"
            if not isinstance(nraw, Mapping):
                r.errors[npath] = "must be an object"
                continue
            speed = r.number(
                nraw, "speed_gbps", f"{npath}.speed_gbps", gt=0, le=NIC_SPEED_GBPS_MAX, default=None
            )
            if speed is None:
                r.errors.setdefault(
                    f"{npath}.speed_gbps", f"required, a number in (0, {NIC_SPEED_GBPS_MAX:g}]"
                )
                continue
            nic_name = str(nraw.get("name") or f"eth{j}")
            if not identifiers.is_interface_name(nic_name):
                r.errors[f"{npath}.name"] = (
                    f"{nic_name!r} is not an interface name: 1-15 letters, digits, '.', '_', "
                    "':', '@' or '-' (as in eth1, ens3f0, ib0)"
                )
                continue
            nics.append(
                Nic(
                    name=nic_name,
                    speed_gbps=speed,
                    kind=r.choice(nraw, "kind", f"{npath}.kind", NIC_KINDS, "ethernet"),
                    role=r.choice(nraw, "role", f"{npath}.role", NIC_ROLES, "data"),
                )
            )
        free = None
        if raw.get("free_gpus") is not None:
            free = r.integer(raw, "free_gpus", f"{path}.free_gpus", 0, GPUS_PER_NODE_MAX, None)
        p2p = None
        if raw.get("p2p") is not None:
            p2p = r.boolean(raw, "p2p", f"{path}.p2p")
        pool_kind = None
        if raw.get("pool_kind") is not None:
            pool_kind = r.choice(raw, "pool_kind", f"{path}.pool_kind", POOL_KINDS, "dedicated")
        if gpu is None or count is None:
            continue
        nodes.append(
            Node(
                hostname=hostname,
                gpu=gpu,
                gpu_count=count,
                intra_link=link,
                nics=tuple(nics),
                free_gpus=free,
                p2p=p2p,
                address=address,
                pool_kind=pool_kind,
            )
        )
    return tuple(nodes)


def _model(r: _Reader, d: Mapping[str, Any]) -> tuple[str, str, str, Architecture | None]:
    raw = d.get("model")
    if isinstance(raw, str):
        raw = {"slug": raw}
    if not isinstance(raw, Mapping):
        r.errors["model"] = "required: a catalog slug, {'slug': ...} or {'hf_config': {...}}"
        return "", "", "", None
    inline = raw.get("architecture")
    if isinstance(inline, Mapping) and "num_hidden_layers" in inline:
        # A config.json under "architecture" (accepted for compatibility).
        raw = {**raw, "hf_config": inline}
    if "architecture" in raw and "hf_config" not in raw:
        arch = _inline_architecture(r, raw.get("architecture"))
        if arch is None:
            return "", "", "", None
        return _named_model(r, raw, arch)
    if "hf_config" in raw:
        cfg: Any = raw.get("hf_config") or {}
        try:
            arch = from_hf_config(cfg)
        except ArchitectureError as exc:
            for key, msg in exc.errors.items():
                r.errors[f"model.hf_config.{key}"] = msg
            return "", "", "", None
        return _named_model(r, raw, arch)
    slug = str(raw.get("slug", ""))
    entry = load_models().get(slug)
    if entry is None:
        r.errors["model.slug"] = (
            f"unknown model slug {slug!r}; known: {', '.join(sorted(load_models()))}"
        )
        return "", "", "", None
    return entry.name, entry.hf_repo, slug, entry.architecture


def _named_model(
    r: _Reader, raw: Mapping[str, Any], arch: Architecture
) -> tuple[str, str, str, Architecture | None]:
    """Return (name, repository, slug, arch) of an inline model; the repository reaches scripts.

    An explicit `hf_repo` must be a Hugging Face repository id or an absolute path. Without one,
    the name serves when it is a repository id, else the weights are expected under /models/.
    """
    name = str(raw.get("name") or raw.get("hf_repo") or "custom model")
    repo = str(raw.get("hf_repo") or "")
    if repo == raw.get("name") and not identifiers.is_model_ref(repo):
        repo = ""  # older wizards copied the display name here
    if repo and not identifiers.is_model_ref(repo):
        r.errors["model.hf_repo"] = (
            f"{repo!r} must be a Hugging Face repository id (owner/name: letters, digits, '.', "
            "'_', '-') or an absolute path such as /models/my-model"
        )
    if not repo:
        repo = name if identifiers.is_model_ref(name) else f"/models/{identifiers.to_name(name)}"
    slug = str(raw.get("slug") or "")
    if slug and not identifiers.is_name(slug):
        r.errors["model.slug"] = (
            f"{slug!r} must be 1-100 letters, digits, '.', '_' or '-', starting with a letter "
            "or digit"
        )
    return name, repo, slug, arch


_ARCH_REQUIRED = (
    "hidden_size",
    "num_layers",
    "num_attention_heads",
    "num_kv_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "max_position_embeddings",
)
_ARCH_INTS = (
    *_ARCH_REQUIRED,
    "num_experts",
    "experts_per_token",
    "moe_intermediate_size",
    "num_shared_experts",
    "num_dense_layers",
    "kv_lora_rank",
    "q_lora_rank",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "v_head_dim",
    "num_mtp_layers",
)
# The quantization_config a checkpoint of each `checkpoint_quantization` declares, for an
# inline architecture (no config.json): the checkpoint's modules are sized as vLLM loads them.
_DECLARED_QUANTIZATION: dict[str, dict[str, Any]] = {
    "fp8": {"quant_method": "fp8"},
    "mxfp4": {"quant_method": "mxfp4"},
    "int8": {"quant_method": "gptq", "bits": 8},
    "int4": {"quant_method": "gptq", "bits": 4},
}


def _inline_architecture(r: _Reader, raw: Any) -> Architecture | None:
    """Return an Architecture from its own field names (catalog.Architecture), or None."""
    if not isinstance(raw, Mapping):
        r.errors["model.architecture"] = "must be an object with the Architecture fields"
        return None
    values: dict[str, Any] = {}
    for key in _ARCH_INTS:
        if key not in raw:
            if key in _ARCH_REQUIRED:
                r.errors[f"model.architecture.{key}"] = "required, a positive integer"
            continue
        value = r.integer(raw, key, f"model.architecture.{key}", 0, 10**9, None)
        if value is not None:
            values[key] = value
    for key in _ARCH_REQUIRED:
        if values.get(key) == 0:
            r.errors[f"model.architecture.{key}"] = "must be a positive integer"
    if any(k.startswith("model.architecture") for k in r.errors):
        return None
    if values["num_attention_heads"] % values["num_kv_heads"]:
        r.errors["model.architecture.num_kv_heads"] = (
            f"must divide num_attention_heads ({values['num_attention_heads']})"
        )
        return None
    # The fields beyond the inventory's columns (attention windows, vision tower, per-module
    # quantization...): an Architecture sent whole (catalog.architecture_json) arrives whole.
    extra = config_only_values(raw, values["num_layers"], "model.architecture", r.errors)
    if any(k.startswith("model.architecture") for k in r.errors):
        return None
    quant = raw.get("checkpoint_quantization")
    quant = quant if quant in _DECLARED_QUANTIZATION else None
    stated_scheme = extra.pop("quantization", None)
    return Architecture(
        model_type=str(raw.get("model_type") or "inline"),
        tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
        attention_bias=bool(raw.get("attention_bias", False)),
        qk_norm=bool(raw.get("qk_norm", False)),
        router_bias=bool(raw.get("router_bias", False)),
        default_dtype=str(raw.get("default_dtype") or "bf16"),
        checkpoint_quantization=quant,
        quantization=stated_scheme
        or (
            parse_quantization(
                {"quantization_config": _DECLARED_QUANTIZATION[quant]}, values["num_layers"]
            )
            if quant
            else None
        ),
        **values,
        **extra,
    )


def _arrival(r: _Reader, w: Mapping[str, Any]) -> dict[str, Any]:
    """Return the arrival shape fields of a workload; a rate or a burst size is required."""
    arrival = r.choice(w, "arrival", "workload.arrival", ARRIVALS, "closed")
    rate = r.number(
        w, "request_rate_per_s", "workload.request_rate_per_s", gt=0, le=1e6, default=None
    )
    burst = r.integer(w, "burst_size", "workload.burst_size", 1, 100_000, None)
    if arrival == "poisson" and rate is None:
        r.errors.setdefault(
            "workload.request_rate_per_s", "required when arrival is poisson: a number in (0, 1e6]"
        )
    if arrival == "burst" and burst is None:
        r.errors.setdefault(
            "workload.burst_size", "required when arrival is burst: an integer from 1 to 100000"
        )
    return {
        "arrival": arrival,
        "request_rate_per_s": rate,
        "burst_size": burst,
        "input_tokens_sd": r.number(
            w, "input_tokens_sd", "workload.input_tokens_sd", gt=-1e-9, le=1e7, default=0.0
        )
        or 0.0,
        "output_tokens_sd": r.number(
            w, "output_tokens_sd", "workload.output_tokens_sd", gt=-1e-9, le=1e7, default=0.0
        )
        or 0.0,
        "shared_prefix_fraction": r.number(
            w,
            "shared_prefix_fraction",
            "workload.shared_prefix_fraction",
            gt=-1e-9,
            le=0.99,
            default=0.0,
        )
        or 0.0,
        "num_requests": r.integer(w, "num_requests", "workload.num_requests", 1, 20_000, None),
    }


def spec_from_dict(d: Mapping[str, Any]) -> PlanSpec:
    """Validate a JSON-like dict and return a PlanSpec; raise SpecError with every field error."""
    if not isinstance(d, Mapping):
        raise SpecError({"spec": "must be a JSON object"})
    r = _Reader()
    name, repo, slug, arch = _model(r, d)
    weight_dtype, pre_quantized = _weights(r, d, arch)
    version = _vllm_version(r, d)
    backend = _step_backend(r, d)
    kv_dtype = r.choice(d, "kv_cache_dtype", "kv_cache_dtype", KV_DTYPES, "auto")
    rope, max_len = _context_length(r, d, arch)
    util = r.number(
        d, "gpu_memory_utilization", "gpu_memory_utilization", gt=0.0, le=1.0, default=0.9
    )
    mnbt = r.integer(d, "max_num_batched_tokens", "max_num_batched_tokens", 16, 1_048_576, None)
    mns = r.integer(d, "max_num_seqs", "max_num_seqs", 1, 65536, None)
    workload = _workload(r, r.mapping(d, "workload", "workload"))
    hardware = _hardware(r, r.mapping(d, "hardware", "hardware"))
    ops = _operations(r, r.mapping(d, "operations", "operations"))
    pinned = _pinned_layout(r, d.get("pinned_layout"), arch, hardware.nodes)
    network = _network_overrides(r, r.mapping(d, "network", "network"))
    image = _vllm_image(r, d)
    if r.errors or arch is None:
        raise SpecError(r.errors or {"model": "required"})
    return PlanSpec(
        model_name=name,
        hf_repo=repo,
        model_slug=slug,
        architecture=arch,
        weight_dtype=weight_dtype,
        pre_quantized=pre_quantized,
        kv_cache_dtype=kv_dtype,
        max_model_len=max_len or 8192,
        gpu_memory_utilization=util or 0.9,
        max_num_batched_tokens=mnbt,
        max_num_seqs=mns,
        workload=workload,
        hardware=hardware,
        operations=ops,
        pinned=pinned,
        network=network,
        vllm_image=image,
        rope_scaling_factor=rope,
        vllm_version=version,
        vllm_version_stated=bool(d.get("vllm_version")),
        step_backend=backend,
    )


def _weights(r: _Reader, d: Mapping[str, Any], arch: Architecture | None) -> tuple[str, bool]:
    """Return the weight dtype (the checkpoint's own by default) and whether it is stored so."""
    default_dtype = "bf16"
    if arch is not None:
        default_dtype = arch.checkpoint_quantization or arch.default_dtype
    weight_dtype = r.choice(d, "weight_dtype", "weight_dtype", WEIGHT_DTYPES, default_dtype)
    pre_quantized = r.boolean(
        d,
        "pre_quantized",
        "pre_quantized",
        bool(arch and arch.checkpoint_quantization == weight_dtype),
    )
    if (
        weight_dtype in CHECKPOINT_ONLY_DTYPES
        and arch is not None
        and arch.checkpoint_quantization != weight_dtype
    ):
        r.errors["weight_dtype"] = (
            f"{weight_dtype} needs a checkpoint stored in {weight_dtype} "
            f"(config.json quantization_config.quant_method {weight_dtype!r}); vLLM does not "
            "quantize to it at load time"
        )
    return weight_dtype, pre_quantized


def _vllm_version(r: _Reader, d: Mapping[str, Any]) -> str:
    """Return the vLLM release the plan targets (the bundled one by default)."""
    version = d.get("vllm_version") or VLLM_VERSION
    try:
        parse_version(str(version))
    except VersionError:
        r.errors["vllm_version"] = (
            f"must be a vLLM release number such as {VLLM_VERSION}, got {version!r}"
        )
        version = VLLM_VERSION
    return str(version)


def _step_backend(r: _Reader, d: Mapping[str, Any]) -> StepBackend:
    """Return what times the serving model's steps; the measured tables need their package."""
    backend = StepBackend(r.choice(d, "step_backend", "step_backend", STEP_BACKENDS, "roofline"))
    if (
        backend is StepBackend.AICONFIGURATOR
        and importlib.util.find_spec("aiconfigurator_core") is None
    ):
        r.errors["step_backend"] = (
            "aiconfigurator needs the optional package aiconfigurator-core "
            "(pip install 'serveplan[aiconfigurator]'); use roofline without it"
        )
    return backend


def _context_length(
    r: _Reader, d: Mapping[str, Any], arch: Architecture | None
) -> tuple[float, int | None]:
    """Return (rope scaling factor, max_model_len), the length bounded by the model's context."""
    rope = r.number(d, "rope_scaling_factor", "rope_scaling_factor", gt=0.99, le=64, default=1.0)
    limit = int(arch.max_position_embeddings * (rope or 1.0)) if arch else 10_000_000
    max_len = r.integer(d, "max_model_len", "max_model_len", 16, limit, min(limit, 8192))
    if "max_model_len" in r.errors and arch is not None:
        r.errors["max_model_len"] += (
            f" (the model's max_position_embeddings × rope_scaling_factor {rope or 1.0:g}; "
            "set rope_scaling_factor to extend the context with YaRN)"
        )
    return rope or 1.0, max_len


def _workload(r: _Reader, w: Mapping[str, Any]) -> Workload:
    """Return the workload: concurrency, request lengths, traffic, SLOs and arrival shape."""
    return Workload(
        concurrency=r.integer(w, "concurrency", "workload.concurrency", 1, 1_000_000, 16) or 16,
        avg_input_tokens=r.integer(
            w, "avg_input_tokens", "workload.avg_input_tokens", 1, 10_000_000, 1024
        )
        or 1024,
        avg_output_tokens=r.integer(
            w, "avg_output_tokens", "workload.avg_output_tokens", 1, 10_000_000, 256
        )
        or 256,
        peak_qps=r.number(w, "peak_qps", "workload.peak_qps", gt=0, le=1e7, default=None),
        traffic_shape=r.choice(
            w, "traffic_shape", "workload.traffic_shape", TRAFFIC_SHAPES, "steady"
        ),
        ttft_slo_ms=r.number(w, "ttft_slo_ms", "workload.ttft_slo_ms", gt=0, le=1e7, default=None),
        itl_slo_ms=r.number(w, "itl_slo_ms", "workload.itl_slo_ms", gt=0, le=1e7, default=None),
        shared_prefixes=r.boolean(w, "shared_prefixes", "workload.shared_prefixes"),
        **_arrival(r, w),
    )


def _hardware(r: _Reader, hw: Mapping[str, Any]) -> Hardware:
    """Return the offered nodes and the pool kind; at least one usable GPU is required."""
    pool_kind = r.choice(hw, "pool_kind", "hardware.pool_kind", POOL_KINDS, "dedicated")
    nodes = _nodes(r, hw) if hw else ()
    if not hw:
        r.errors["hardware"] = "required: {'nodes': [...]} or {'node_count', 'gpus_per_node', ...}"
    elif nodes and sum(n.usable_gpus for n in nodes) == 0:
        r.errors["hardware.nodes"] = "no usable GPU: every node has 0 free GPUs"
    return Hardware(nodes=nodes, pool_kind=pool_kind)


_OPERATIONS = (
    "models_change_often",
    "multi_model_pool",
    "self_healing_slo",
    "ray_in_use",
    "team_ray_experience",
    "gateway_available",
    "avoid_manual_nccl",
)


def _operations(r: _Reader, o: Mapping[str, Any]) -> Operations:
    """Return the team's operating facts (each a boolean, false unless stated)."""
    return Operations(**{f: r.boolean(o, f, f"operations.{f}") for f in _OPERATIONS})


def _pinned_layout(
    r: _Reader, p: Any, arch: Architecture | None, nodes: tuple[Node, ...]
) -> Layout | None:
    """Return the layout the user pinned, checked against the model and the offered GPUs."""
    if p is None:
        return None
    if not isinstance(p, Mapping):
        r.errors["pinned_layout"] = "must be an object {tp, pp, replicas}"
        return None
    tp = r.integer(p, "tp", "pinned_layout.tp", 1, 1024, 1) or 1
    pp = r.integer(p, "pp", "pinned_layout.pp", 1, 64, 1) or 1
    reps = r.integer(p, "replicas", "pinned_layout.replicas", 1, 100000, 1) or 1
    if arch is not None:
        if arch.num_attention_heads % tp:
            r.errors["pinned_layout.tp"] = (
                f"must divide the {arch.num_attention_heads} attention heads; allowed: "
                + ", ".join(str(t) for t in valid_tp_sizes(arch, 1024))
            )
        elif not arch.is_mla and arch.num_kv_heads % tp and tp % arch.num_kv_heads:
            r.errors["pinned_layout.tp"] = (
                f"TP {tp} must divide or be a multiple of the {arch.num_kv_heads} KV heads"
            )
        if pp > arch.num_layers:
            r.errors["pinned_layout.pp"] = f"must be between 1 and {arch.num_layers}"
    total = sum(n.usable_gpus for n in nodes)
    if nodes and tp * pp * reps > total:
        r.errors["pinned_layout"] = f"needs {tp * pp * reps} GPUs, the hardware offers {total}"
    return Layout(tp=tp, pp=pp, replicas=reps)


def _network_overrides(r: _Reader, n: Mapping[str, Any]) -> NetworkOverrides:
    """Return the link figures the user measured, replacing the catalog's."""
    return NetworkOverrides(
        cross_node_bandwidth_gbs=r.number(
            n,
            "cross_node_bandwidth_gbs",
            "network.cross_node_bandwidth_gbs",
            gt=0,
            le=10000,
            default=None,
        ),
        intra_node_bandwidth_gbs=r.number(
            n,
            "intra_node_bandwidth_gbs",
            "network.intra_node_bandwidth_gbs",
            gt=0,
            le=100000,
            default=None,
        ),
        per_call_latency_us=r.number(
            n, "per_call_latency_us", "network.per_call_latency_us", gt=0, le=1e6, default=None
        ),
        overlap_factor=r.number(
            n, "overlap_factor", "network.overlap_factor", gt=-1e-9, le=0.95, default=None
        ),
    )


def _vllm_image(r: _Reader, d: Mapping[str, Any]) -> str:
    """Return the Docker image of vLLM the scripts run."""
    image = str(d.get("vllm_image") or "vllm/vllm-openai:v0.32.0")
    if not identifiers.is_image_ref(image):
        r.errors["vllm_image"] = (
            f"{image!r} is not a Docker image reference (e.g. vllm/vllm-openai:v0.32.0)"
        )
    return image


def valid_tp_sizes(arch: Architecture, max_tp: int) -> list[int]:
    """Return the TP sizes vLLM accepts for this architecture, up to max_tp."""
    sizes = []
    for tp in range(1, max_tp + 1):
        if arch.num_attention_heads % tp:
            continue
        if not arch.is_mla and arch.num_kv_heads % tp and tp % arch.num_kv_heads:
            continue
        sizes.append(tp)
    return sizes
