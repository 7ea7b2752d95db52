"""Replay a published benchmark run's setup through the serving model.

A run record (tests/planner/engine/fixtures/serving_runs.json) states the GPU, model, dtype,
TP/PP, scheduler limits, the KV cache the server logged and the load. `replay` rebuilds that
replica and predicts what the benchmark measured, so calibration and validation compare like
with like (the KV capacity is the logged one, not our memory model's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from catalog.data import load_models
from catalog.hf_config import from_hf_config
from planner.engine.assumptions import Assumptions
from planner.engine.memory import plan_memory
from planner.engine.network import custom_all_reduce_applies, inter_node_link, intra_node_link
from planner.engine.serving.backend import StepBackend, resolve_kernels
from planner.engine.serving.bands import regime
from planner.engine.serving.context import ServingContext, build_context
from planner.engine.serving.kernels import gpu_generation
from planner.engine.serving.predict import Prediction, predict
from planner.engine.spec import NetworkOverrides, Nic, Node, Workload, catalog_gpu


def workload_of(run: Mapping[str, Any]) -> Workload:
    """Return the run's load as a Workload (mean output = tokens the benchmark counted)."""
    load = run["load"]
    n = int(load.get("burst_size") or load.get("num_prompts") or 1)
    out = load.get("generated_tokens")
    mean_out = round(out / n) if out else int(load["output_tokens"])
    arrival = load["arrival"]
    return Workload(
        concurrency=int(load.get("concurrency") or n),
        avg_input_tokens=int(load["input_tokens"]),
        avg_output_tokens=max(1, mean_out),
        arrival=arrival,
        burst_size=n if arrival == "burst" else None,
        request_rate_per_s=load.get("request_rate_per_s"),
        num_requests=int(load.get("num_prompts") or n),
        cached_requests=int(load.get("cached_prompts") or 0),
        input_tokens_sd=float(load.get("input_tokens_sd") or 0.0),
        output_tokens_sd=float(load.get("output_tokens_sd") or 0.0),
    )


def replay(
    run: Mapping[str, Any],
    a: Assumptions | None = None,
    backend: StepBackend = StepBackend.ROOFLINE,
) -> Prediction:
    """Return the serving model's prediction for a published run (steps timed by `backend`)."""
    return predict(replay_context(run, a, backend), workload_of(run), scan=False)


def model_config(run: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return the run's model config.json: inline (`hf_config`) or the catalog's."""
    return run.get("hf_config") or load_models()[run["model_slug"]].config


def run_regime(run: Mapping[str, Any], backend: StepBackend = StepBackend.ROOFLINE) -> str:
    """Return the band regime (serving/bands.py) a published run falls in, as a plan's would."""
    gpu = catalog_gpu(run["gpu"])
    return regime(
        generation=gpu_generation(gpu.slug, gpu.fp8_support),
        moe=from_hf_config(model_config(run)).is_moe,
        dtype=run["weight_dtype"],
        arrival=run["load"]["arrival"],
        backend=backend.value,
    )


def replay_context(
    run: Mapping[str, Any],
    a: Assumptions | None = None,
    backend: StepBackend = StepBackend.ROOFLINE,
) -> ServingContext:
    """Return the replica a published run served from, as the serving model sees it."""
    a = a or Assumptions()
    config = model_config(run)
    arch = from_hf_config(config)
    gpu = catalog_gpu(run["gpu"])
    tp, pp = int(run["tp"]), int(run.get("pp", 1))
    version = run.get("vllm_version") or a.vllm_version
    cross_node_pp = run.get("pp_link")  # {"kind": "infiniband", "gbps": 400}: stages on two nodes
    node = Node(
        hostname="run",
        gpu=gpu,
        gpu_count=tp * (1 if cross_node_pp else pp),
        intra_link="nvlink" if run.get("tp_link", "nvlink") in ("nvlink", "") else "pcie",
        nics=(
            (Nic(name="data", speed_gbps=cross_node_pp["gbps"], kind=cross_node_pp["kind"]),)
            if cross_node_pp
            else ()
        ),
    )
    mem = plan_memory(
        arch,
        dtype=run["weight_dtype"],
        kv_cache_dtype=run.get("kv_cache_dtype", "auto"),
        tp=tp,
        pp=pp,
        visible_gib=gpu.driver_visible_gib,
        gpu_slug=gpu.slug,
        utilization=run.get("gpu_memory_utilization") or 0.9,
        max_model_len=run.get("max_model_len") or 4096,
        max_num_batched_tokens=run["max_num_batched_tokens"],
        max_num_seqs=run["max_num_seqs"],
        a=a,
        # The run's release and links decide the start-up profile, as in a plan (layouts.py).
        vllm_version=version,
        custom_all_reduce=custom_all_reduce_applies(node, tp, "intra-node"),
        vendor=gpu.vendor,
    )
    if run.get("kv_tokens"):
        # The KV cache the server logged, not our memory model's (which is validated apart).
        blocks = int(run["kv_tokens"]) // a.block_size_tokens
        mem = dataclasses.replace(mem, blocks=blocks, kv_tokens=blocks * a.block_size_tokens)
    link = intra_node_link(
        node,
        a,
        NetworkOverrides(
            intra_node_bandwidth_gbs=run.get("tp_link_bandwidth_gbs"),
            per_call_latency_us=run.get("tp_link_latency_us"),
        ),
        ring=tp,
    )
    kernels, choice = resolve_kernels(
        backend,
        hf_config=config,
        gpu_slug=gpu.slug,
        tp=tp,
        dtype=run["weight_dtype"],
        kv_cache_dtype=run.get("kv_cache_dtype", "auto"),
        tp_link_kind=link.kind,
    )
    return build_context(
        arch,
        gpu,
        mem,
        tp=tp,
        pp=pp,
        tp_link=link,
        pp_link=inter_node_link([node] * pp, a, NetworkOverrides()) if cross_node_pp else link,
        dtype=run["weight_dtype"],
        max_num_seqs=int(run["max_num_seqs"]),
        max_num_batched_tokens=int(run["max_num_batched_tokens"]),
        a=a,
        overlap=a.overlap_factor,
        label=run["id"],
        kernels=kernels,
        backend=choice,
        vllm_version=version,
        max_model_len=run.get("max_model_len") or 4096,
        chunked_prefill=run.get("chunked_prefill"),
    )
