"""Every reason, signal and pitfall text, keyed by its stable id.

The Django layer renders translations from `id` + `params`; the English templates live only here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# id -> (DOMAIN.md rule with the seed it comes from, English template)
TEXTS: dict[str, tuple[str, str]] = {
    # reasons
    "node_selection": (
        "§3 (000 §2, 002 §3)",
        "Chose {nodes_used} of {nodes_offered} node(s) with {gpu} GPUs: same GPU type inside "
        "every replica, fastest data link first ({link_gbps} Gb/s {link_kind}), fewest nodes "
        "that serve {concurrency} concurrent sequences.",
    ),
    "fits_one_gpu": (
        "§3 (004 §6.3)",
        "The model fits one GPU ({weights_gib} GiB weights, {kv_tokens} KV tokens): plain local "
        "vLLM, no Ray, no tensor parallelism.",
    ),
    "fits_one_node": (
        "§3 (000 §5.5)",
        "The model fits one node at TP{tp} ({weights_gib} GiB weights per GPU, room for "
        "{max_concurrency} sequences of {max_model_len} tokens per replica): keep every "
        "replica inside a node, over NVLink/PCIe, no cross-node traffic.",
    ),
    "replicas_behind_balancer": (
        "§3 Route A (000 §2, 002 §3)",
        "{replicas} replicas of TP{tp}×PP{pp} behind {balancer} ({balancer_config}): isolated "
        "failure domains and near-linear scaling; at saturation {replicas} replicas give "
        "{capacity_ratio}× one replica, at your {concurrency} concurrent sequences "
        "{workload_ratio}× (decode is HBM-bound, so one replica's larger batch costs little "
        "more per step).",
    ),
    "layout_choice": (
        "§3 (000 §2)",
        "TP{tp}×PP{pp}×{replicas} scores best: ≈{throughput_tok_s} output tok/s at "
        "{concurrency} concurrent, {itl_ms} ms per output token. Next: {runner_up} (score "
        "{runner_up_score}, {runner_up_tok_s} tok/s){runner_up_note}.",
    ),
    "cross_node_worse": (
        "§2, §3 (000 §2.2, 002 §5)",
        "{layout} across nodes is ranked below: {comm_ms} ms of all-reduce per decode step over "
        "{link_gbps} Gb/s against {compute_ms} ms of HBM-bound compute, {slowdown}× slower per "
        "step than {best}. The 002 article reports cross-node TP at 75–85% of NVLink; the "
        "arithmetic does not support that, enter your measured link bandwidth to recalibrate.",
    ),
    "must_span_nodes": (
        "§3 Route B (000 §5.5)",
        "No single node serves the load: one node holds {single_node_concurrency} sequences of "
        "{max_model_len} tokens, the target is {concurrency}; one instance must span "
        "{nodes} nodes ({gpus} GPUs, {span_concurrency} sequences).",
    ),
    "pp_over_cross_tp": (
        "§1, §3 Route B (000 §2)",
        "TP{tp}×PP{pp} is preferred to TP{cross_tp} across nodes: PP sends one activation per "
        "stage boundary ({pp_comm_ms} ms per step) while cross-node TP all-reduces twice per "
        "layer ({tp_comm_ms} ms per step).",
    ),
    "network_check": (
        "§3 Route B (000 §5.5)",
        "Cross-node link is {link_gbps} Gb/s {link_kind} (≈{effective_gbs} GB/s effective): "
        "{verdict}.",
    ),
    "quantize_first": (
        "§2, §3 (000 §4.4, 000 §5.5)",
        "{requested_dtype} weights ({requested_weights_gib} GiB per GPU) do not fit; "
        "{dtype} weights take {weights_gib} GiB and leave {kv_tokens} KV tokens. Quantize "
        "first, if the accuracy cost is acceptable for your task: measure it on your own "
        "evaluation set before serving.",
    ),
    "memory_rules": (
        "§2 (issue 13)",
        "KV capacity follows the memory profiling of vLLM {vllm_version} ({engine}): "
        "{cuda_graph_gib} GiB of CUDA-graph memory per GPU subtracted before the KV budget "
        "(vLLM does so from 0.21 on), {non_torch_gib} GiB of non-torch memory per GPU (NCCL "
        "and custom all-reduce buffers at TP ≥ 2) and a profile run of {profile_tokens} tokens.",
    ),
    "quantize_fewer_nodes": (
        "§2, §3 (000 §4.4, 000 §5.5)",
        "{dtype} weights fit one replica in {nodes} node(s) where {requested_dtype} needs "
        "{requested_nodes} over a {link_gbps} Gb/s link: {weights_gib} GiB per GPU on {gpus} "
        "GPUs instead of {requested_weights_gib} GiB on {requested_gpus}, {kv_tokens} KV "
        "tokens per replica. Quantize "
        "first, if the accuracy cost is acceptable for your task: measure it on your own "
        "evaluation set before serving.",
    ),
    "small_model_replicas": (
        "§3 Route A (000 §2)",
        "A small model on a large fleet: {replicas} replicas of TP{tp} rather than "
        "TP{larger_tp}×{larger_replicas} — more independent failure domains and no all-reduce "
        "on every layer, at {share_pct}% of its output throughput ({throughput_tok_s} against "
        "{larger_tok_s} tok/s at {concurrency} concurrent sequences).",
    ),
    "larger_tp_wins": (
        "§3 Route A (000 §2)",
        "TP{tp} replicas would fit, but reach only {share_pct}% of TP{larger_tp}'s output "
        "throughput ({throughput_tok_s} against {larger_tok_s} tok/s at {concurrency} "
        "concurrent sequences): the larger tensor-parallel size is kept.",
    ),
    "quantized_barely": (
        "§2 (000 §4.4)",
        "{dtype} weights ({weights_gib} GiB) fit only barely: they leave {kv_tokens} KV tokens "
        "({max_concurrency} sequences of {max_model_len} tokens) — too little room to serve.",
    ),
    "ray_route_c": (
        "§3 Route C (000 §3, 002 §4)",
        "Ray Serve is recommended: {hits} signal(s) for Ray hit ({signals}); Serve autoscaling "
        "with min_replicas ≥ 1 and num_gpus = TP×PP = {gpus_per_replica}.",
    ),
    "ray_not_needed": (
        "§4 (000 §3–4)",
        "No Ray: {hits_for} signal(s) for Ray hit against {hits_against} against; with fixed "
        "machines and a fixed model, mp and a balancer are enough.",
    ),
    "ray_consider": (
        "§4 (000 §3)",
        "{hits} signal(s) for Ray hit ({signals}): one hit is the threshold to consider Ray "
        "Serve; it is not recommended yet because {hits_against} signal(s) against it hit and "
        "no high-strength signal does. Re-plan with the operations you expect in six months.",
    ),
    "executor_backend": (
        "§3, §5 (001)",
        "Executor backend {backend}: {why}.",
    ),
    "v1_chunked_prefill": (
        "§8 S2b (002 §5)",
        "vLLM V1 profiles at most max_num_batched_tokens={max_num_batched_tokens} tokens with "
        "chunked prefill, not a full {max_model_len}-token prefill, so {layout} starts and "
        "holds {max_concurrency} such sequences. The 002 article's TP4 out-of-memory at 64K "
        "was vLLM V0, which profiled the full length.",
    ),
    "pinned_layout": (
        "§3",
        "Your layout TP{tp}×PP{pp}×{replicas}: {verdict}; {throughput_tok_s} tok/s against "
        "{best_tok_s} tok/s for the recommendation (score {score} vs {best_score}).",
    ),
    "sglang_prefix": (
        "§3 (004 §6.3)",
        "Heavy shared prefixes (RAG/agents): also evaluate SGLang (RadixAttention).",
    ),
    "nothing_fits": (
        "§3 (000 §5.5)",
        "No layout on the offered hardware starts this model at {max_model_len} tokens, even "
        "quantized to int4: add GPUs, shorten max_model_len or pick a smaller model.",
    ),
    "load_not_served": (
        "§2",
        "The best layout holds {max_concurrency_total} concurrent sequences of {max_model_len} "
        "tokens, below the target {concurrency}: requests will queue (or lower max_model_len).",
    ),
    "slo_missed": (
        "§7",
        "Estimated {metric} {value_ms} ms exceeds the SLO {slo_ms} ms.",
    ),
    # signals for Ray
    "sig_models_change_often": ("§4 (000 §3)", "Models change often: {why}."),
    "sig_multi_model_pool": ("§4 (000 §3)", "Several models share one GPU pool: {why}."),
    "sig_traffic_swings": ("§4 (000 §3)", "Traffic swings widely ({shape}): {why}."),
    "sig_self_healing_slo": ("§4 (000 §4)", "Self-healing SLO: {why}."),
    "sig_ray_in_use": ("§4 (000 §4)", "Ray already runs other workloads here: {why}."),
    "sig_cross_node_no_nccl": (
        "§4 (002 §4)",
        "Cross-node GPUs without hand-managed NCCL: {why}.",
    ),
    # signals against Ray
    "sig_fixed_small_fleet": ("§4 (000 §4)", "One or two fixed machines, fixed model: {why}."),
    "sig_steady_traffic": ("§4 (000 §4)", "Steady traffic: {why}."),
    "sig_gateway_available": ("§4 (002 §4)", "A gateway already distributes requests: {why}."),
    "sig_quantization_fits": (
        "§4 (000 §4)",
        "Quantization fits the model on one card/node: {why}.",
    ),
    "sig_no_ray_experience": ("§4 (000 §4)", "No Ray operations experience: {why}."),
    # pitfalls
    "pit_nccl_socket_ifname": (
        "§6 (000 §6, 002 §6)",
        "NCCL may pick the wrong NIC across nodes.",
    ),
    "pit_nccl_roce_gid": ("§6 (002 §6)", "RoCE data NIC {nic}: NCCL needs the RoCE v2 GID."),
    "pit_nccl_tcp": (
        "§6 (002 §6)",
        "Plain Ethernet/TCP between nodes: stop NCCL probing InfiniBand.",
    ),
    "pit_nccl_debug": ("§6 (002 §6)", "Diagnose NCCL start-up problems with NCCL_DEBUG=INFO."),
    "pit_ray_version": (
        "§6 (002 §6)",
        "Ray must be the version the vLLM image ships on every node.",
    ),
    "pit_ray_num_gpus": (
        "§3 Route C, §6 (001, 002 §6)",
        "Ray num_gpus must equal TP×PP = {gpus_per_replica}, or tasks hang pending.",
    ),
    "pit_ray_start_num_gpus": ("§6 (002 §6)", "ray start needs an explicit --num-gpus."),
    "pit_ray_head_light": (
        "§6 (002 §6)",
        "Put the Ray head on the lighter machine and cap its memory.",
    ),
    "pit_ray_logs": ("§6 (002 §6)", "Worker logs are scattered across nodes in Ray mode."),
    "pit_gpu_util_shared": (
        "§6 (004 §4)",
        "Something else may share these GPUs (pool kind {pool_kind}).",
    ),
    "pit_docker_ipc": ("§6 (002 §6)", "Docker limits shared memory to 64 MB by default."),
    "pit_weights_every_node": (
        "§6 (000 §6)",
        "Weights must be readable on every node; NFS bandwidth can stall loading.",
    ),
    "pit_pin_versions": ("§6 (002 §6)", "Unpinned images drift between nodes."),
    "pit_low_kv_headroom": (
        "§2, §6 (004 §4)",
        "Only {max_concurrency} sequences of {max_model_len} tokens fit per replica "
        "(target {per_replica} per replica).",
    ),
    "pit_slow_link_cross_tp": (
        "§2, §3 (000 §2.2)",
        "Tensor parallelism across a {link_gbps} Gb/s link costs {comm_ms} ms per decode step.",
    ),
    "pit_link_below_10gbe": (
        "§3 (000 §5.5)",
        "The cross-node link is {link_gbps} Gb/s, below 10 GbE.",
    ),
    "pit_no_data_nic": (
        "§6 (000 §6)",
        "Node {hostname} has no data NIC recorded; NCCL_SOCKET_IFNAME cannot be set for it.",
    ),
    "pit_cold_start": (
        "§2, §3 Route C (000 §4)",
        "Loading {weights_gib} GiB of weights takes about {cold_start_s} s: scaling to zero "
        "replicas times clients out.",
    ),
    "pit_ray_max_restarts": (
        "§3 Route C (001)",
        "Actor max_restarts defaults to 0, and a restart does not resume in-flight streams.",
    ),
    "pit_prefix_caching": (
        "§6 (004 §3)",
        "Dynamic text at the start of prompts (timestamps, user ids) kills prefix-cache hits.",
    ),
    "pit_needs_quantized_checkpoint": (
        "§2 (000 §4.4)",
        "vLLM cannot quantize to {dtype} on the fly: serve a pre-quantized checkpoint.",
    ),
    "pit_nnodes_with_ray": (
        "§5 (001)",
        "Never combine --nnodes with --distributed-executor-backend ray.",
    ),
}

ACTIONS: dict[str, str] = {
    "pit_nccl_socket_ifname": "Set NCCL_SOCKET_IFNAME={nic} and GLOO_SOCKET_IFNAME on every node.",
    "pit_nccl_roce_gid": "Set NCCL_IB_GID_INDEX=3.",
    "pit_nccl_tcp": "Set NCCL_IB_DISABLE=1.",
    "pit_nccl_debug": "Start once with NCCL_DEBUG=INFO and check which interface NCCL chose.",
    "pit_ray_version": "Run ray start from the same image as vLLM ({image}).",
    "pit_ray_num_gpus": "Keep ray_actor_options.num_gpus = {gpus_per_replica}; compare it with "
    "TP×PP when an actor init times out.",
    "pit_ray_start_num_gpus": "Use the generated ray start lines (--num-gpus={gpus_per_node}).",
    "pit_ray_head_light": "Start the head on {head} (the lighter machine) with its object store "
    "capped (--object-store-memory).",
    "pit_ray_logs": "Collect worker logs centrally (e.g. ship /tmp/ray/session_latest/logs).",
    "pit_gpu_util_shared": "Lower --gpu-memory-utilization to 0.85.",
    "pit_docker_ipc": "Run containers with --ipc=host (or --shm-size of 8–32g) and --network host.",
    "pit_weights_every_node": "Pre-copy the weights to local disk on every node, same path.",
    "pit_pin_versions": "Pin the image tag ({image}) on every node.",
    "pit_low_kv_headroom": "Lower max_model_len, use an fp8 KV cache, or add replicas.",
    "pit_slow_link_cross_tp": "Keep TP inside a node; use PP or replicas across nodes.",
    "pit_link_below_10gbe": "Quantize or pick a smaller model before spanning nodes.",
    "pit_no_data_nic": "Record the data NIC of {hostname} in the inventory.",
    "pit_cold_start": "Keep min_replicas ≥ 1 and raise the start-up timeout, or pre-warm.",
    "pit_ray_max_restarts": "Set max_restarts explicitly and make clients retry failed streams.",
    "pit_prefix_caching": "Put dynamic text last in prompts.",
    "pit_needs_quantized_checkpoint": "Use an {dtype} checkpoint (AWQ/GPTQ/compressed-tensors) "
    "of the model.",
    "pit_nnodes_with_ray": "The generated commands use one or the other, never both.",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """A reason, signal or pitfall: stable id, DOMAIN.md rule, parameters and English text."""

    id: str
    rule: str
    params: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able dict."""
        return {"id": self.id, "rule": self.rule, "params": dict(self.params), "text": self.text}


def message(msg_id: str, **params: Any) -> Message:
    """Return the Message for `msg_id` with its English text rendered from `params`."""
    rule, template = TEXTS[msg_id]
    return Message(id=msg_id, rule=rule, params=params, text=template.format(**params))


def action_text(msg_id: str, **params: Any) -> str:
    """Return the English action for a pitfall id."""
    return ACTIONS[msg_id].format(**params)
