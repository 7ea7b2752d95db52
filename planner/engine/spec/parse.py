"""spec_from_dict: a plain dict (API, CLI, wizard) into a PlanSpec, with every field error
collected and named by its path.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import Any

from catalog import identifiers
from catalog.architecture import Architecture
from planner.engine.profiling import VersionError, parse_version
from planner.engine.spec.hardware import read_hardware, read_network_overrides
from planner.engine.spec.model import read_model, read_weights
from planner.engine.spec.reader import Reader
from planner.engine.spec.values import (
    ARRIVALS,
    KV_DTYPES,
    TRAFFIC_SHAPES,
    Layout,
    Node,
    Operations,
    PlanSpec,
    SpecError,
    Workload,
)
from planner.engine.step_backend import STEP_BACKENDS, StepBackend
from planner.engine.vllm_flags import VLLM_VERSION


def _arrival(r: Reader, w: Mapping[str, Any]) -> dict[str, Any]:
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
    r = Reader()
    name, repo, slug, arch = read_model(r, d)
    weight_dtype, pre_quantized = read_weights(r, d, arch)
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
    hardware = read_hardware(r, r.mapping(d, "hardware", "hardware"))
    ops = _operations(r, r.mapping(d, "operations", "operations"))
    pinned = _pinned_layout(r, d.get("pinned_layout"), arch, hardware.nodes)
    network = read_network_overrides(r, r.mapping(d, "network", "network"))
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


def _vllm_version(r: Reader, d: Mapping[str, Any]) -> str:
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


def _step_backend(r: Reader, d: Mapping[str, Any]) -> StepBackend:
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
    r: Reader, d: Mapping[str, Any], arch: Architecture | None
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


def _workload(r: Reader, w: Mapping[str, Any]) -> Workload:
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


_OPERATIONS = (
    "models_change_often",
    "multi_model_pool",
    "self_healing_slo",
    "ray_in_use",
    "team_ray_experience",
    "gateway_available",
    "avoid_manual_nccl",
)


def _operations(r: Reader, o: Mapping[str, Any]) -> Operations:
    """Return the team's operating facts (each a boolean, false unless stated)."""
    return Operations(**{f: r.boolean(o, f, f"operations.{f}") for f in _OPERATIONS})


def _pinned_layout(
    r: Reader, p: Any, arch: Architecture | None, nodes: tuple[Node, ...]
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


def _vllm_image(r: Reader, d: Mapping[str, Any]) -> str:
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
