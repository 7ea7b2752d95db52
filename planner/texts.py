"""Django-side rendering of the engine's reasons, signals and pitfalls, through gettext.

The engine is language-neutral: every message carries a stable `id`, its DOMAIN.md `rule`, its
`params` and the English `text`. Here each id has a lazily translated template (the same English,
marked for translation so issue 9 only has to fill a catalog), rendered with the params. When an
id is unknown, or the engine's English wording has drifted from ours, the engine's text wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import get_language, override
from django.utils.translation import gettext_lazy as _

from planner import engine_texts_i18n as engine_i18n
from planner.engine.result import Pitfall, PlanResult, Signal
from planner.engine.texts import Message
from planner.presentation.numbers import count

# Engine message id -> translated template (python-brace-format, params of the engine).
MESSAGES: dict[str, Any] = {
    "node_selection": _(
        "Chose {nodes_used} of {nodes_offered} node(s) with {gpu} GPUs: same GPU type "
        "inside every replica, fastest data link first ({link_gbps} Gb/s {link_kind}), "
        "fewest nodes that serve {concurrency} concurrent sequences."
    ),
    "fits_one_gpu": _(
        "The model fits one GPU ({weights_gib} GiB weights, {kv_tokens} KV tokens): plain "
        "local vLLM, no Ray, no tensor parallelism."
    ),
    "fits_one_node": _(
        "The model fits one node at TP{tp} ({weights_gib} GiB weights per GPU, room for "
        "{max_concurrency} sequences of {max_model_len} tokens per replica): keep every "
        "replica inside a node, over NVLink/PCIe, no cross-node traffic."
    ),
    "replicas_behind_balancer": _(
        "{replicas} replicas of TP{tp}×PP{pp} behind {balancer} ({balancer_config}): "
        "isolated failure domains and near-linear scaling; at saturation {replicas} "
        "replicas give {capacity_ratio}× one replica, at your {concurrency} concurrent "
        "sequences {workload_ratio}× (decode is HBM-bound, so one replica's larger batch "
        "costs little more per step)."
    ),
    "layout_choice": _(
        "TP{tp}×PP{pp}×{replicas} scores best: ≈{throughput_tok_s} output tok/s at "
        "{concurrency} concurrent, {itl_ms} ms per output token. Next: {runner_up} (score "
        "{runner_up_score}, {runner_up_tok_s} tok/s){runner_up_note}."
    ),
    "cross_node_worse": _(
        # "75–85% of" is not a %-placeholder (xgettext would flag it python-format).
        # xgettext:no-python-format
        "{layout} across nodes is ranked below: {comm_ms} ms of all-reduce per decode step "
        "over {link_gbps} Gb/s against {compute_ms} ms of HBM-bound compute, {slowdown}× "
        "slower per step than {best}. The 002 article reports cross-node TP at 75–85% of "
        "NVLink; the arithmetic does not support that, enter your measured link bandwidth "
        "to recalibrate."
    ),
    "must_span_nodes": _(
        "No single node serves the load: one node holds {single_node_concurrency} sequences "
        "of {max_model_len} tokens, the target is {concurrency}; one instance must span "
        "{nodes} nodes ({gpus} GPUs, {span_concurrency} sequences)."
    ),
    "pp_over_cross_tp": _(
        "TP{tp}×PP{pp} is preferred to TP{cross_tp} across nodes: PP sends one activation "
        "per stage boundary ({pp_comm_ms} ms per step) while cross-node TP all-reduces "
        "twice per layer ({tp_comm_ms} ms per step)."
    ),
    "network_check": _(
        "Cross-node link is {link_gbps} Gb/s {link_kind} (≈{effective_gbs} GB/s effective): "
        "{verdict}."
    ),
    "quantize_first": _(
        "{requested_dtype} weights ({requested_weights_gib} GiB per GPU) do not fit; "
        "{dtype} weights take {weights_gib} GiB and leave {kv_tokens} KV tokens. Quantize "
        "first, if the accuracy cost is acceptable for your task: measure it on your own "
        "evaluation set before serving."
    ),
    "memory_rules": _(
        "KV capacity follows the memory profiling of vLLM {vllm_version} ({engine}): "
        "{cuda_graph_gib} GiB of CUDA-graph memory per GPU subtracted before the KV budget "
        "(vLLM does so from 0.21 on), {non_torch_gib} GiB of non-torch memory per GPU (NCCL "
        "and custom all-reduce buffers at TP ≥ 2) and a profile run of {profile_tokens} tokens."
    ),
    "quantize_fewer_nodes": _(
        "{dtype} weights fit one replica in {nodes} node(s) where {requested_dtype} needs "
        "{requested_nodes} over a {link_gbps} Gb/s link: {weights_gib} GiB per GPU on {gpus} "
        "GPUs instead of {requested_weights_gib} GiB on {requested_gpus}, {kv_tokens} KV "
        "tokens per replica. Quantize "
        "first, if the accuracy cost is acceptable for your task: measure it on your own "
        "evaluation set before serving."
    ),
    "small_model_replicas": _(
        "A small model on a large fleet: {replicas} replicas of TP{tp} rather than "
        "TP{larger_tp}×{larger_replicas} — more independent failure domains and no all-reduce "
        "on every layer, at {share_pct}% of its output throughput ({throughput_tok_s} against "
        "{larger_tok_s} tok/s at {concurrency} concurrent sequences)."
    ),
    "larger_tp_wins": _(
        "TP{tp} replicas would fit, but reach only {share_pct}% of TP{larger_tp}'s output "
        "throughput ({throughput_tok_s} against {larger_tok_s} tok/s at {concurrency} "
        "concurrent sequences): the larger tensor-parallel size is kept."
    ),
    "quantized_barely": _(
        "{dtype} weights ({weights_gib} GiB) fit only barely: they leave {kv_tokens} KV "
        "tokens ({max_concurrency} sequences of {max_model_len} tokens) — too little room "
        "to serve."
    ),
    "ray_route_c": _(
        "Ray Serve is recommended: {hits} signal(s) for Ray hit ({signals}); Serve "
        "autoscaling with min_replicas ≥ 1 and num_gpus = TP×PP = {gpus_per_replica}."
    ),
    "ray_not_needed": _(
        "No Ray: {hits_for} signal(s) for Ray hit against {hits_against} against; with "
        "fixed machines and a fixed model, mp and a balancer are enough."
    ),
    "ray_consider": _(
        "{hits} signal(s) for Ray hit ({signals}): one hit is the threshold to consider Ray "
        "Serve; it is not recommended yet because {hits_against} signal(s) against it hit "
        "and no high-strength signal does. Re-plan with the operations you expect in six "
        "months."
    ),
    "executor_backend": _("Executor backend {backend}: {why}."),
    "v1_chunked_prefill": _(
        "vLLM V1 profiles at most max_num_batched_tokens={max_num_batched_tokens} tokens "
        "with chunked prefill, not a full {max_model_len}-token prefill, so {layout} starts "
        "and holds {max_concurrency} such sequences. The 002 article's TP4 out-of-memory at "
        "64K was vLLM V0, which profiled the full length."
    ),
    "pinned_layout": _(
        "Your layout TP{tp}×PP{pp}×{replicas}: {verdict}; {throughput_tok_s} tok/s against "
        "{best_tok_s} tok/s for the recommendation (score {score} vs {best_score})."
    ),
    "sglang_prefix": _(
        "Heavy shared prefixes (RAG/agents): also evaluate SGLang (RadixAttention)."
    ),
    "nothing_fits": _(
        "No layout on the offered hardware starts this model at {max_model_len} tokens, "
        "even quantized to int4: add GPUs, shorten max_model_len or pick a smaller model."
    ),
    "load_not_served": _(
        "The best layout holds {max_concurrency_total} concurrent sequences of "
        "{max_model_len} tokens, below the target {concurrency}: requests will queue (or "
        "lower max_model_len)."
    ),
    "slo_missed": _("Estimated {metric} {value_ms} ms exceeds the SLO {slo_ms} ms."),
    "sig_models_change_often": _("Models change often: {why}."),
    "sig_multi_model_pool": _("Several models share one GPU pool: {why}."),
    "sig_traffic_swings": _("Traffic swings widely ({shape}): {why}."),
    "sig_self_healing_slo": _("Self-healing SLO: {why}."),
    "sig_ray_in_use": _("Ray already runs other workloads here: {why}."),
    "sig_cross_node_no_nccl": _("Cross-node GPUs without hand-managed NCCL: {why}."),
    "sig_fixed_small_fleet": _("One or two fixed machines, fixed model: {why}."),
    "sig_steady_traffic": _("Steady traffic: {why}."),
    "sig_gateway_available": _("A gateway already distributes requests: {why}."),
    "sig_quantization_fits": _("Quantization fits the model on one card/node: {why}."),
    "sig_no_ray_experience": _("No Ray operations experience: {why}."),
    "pit_nccl_socket_ifname": _("NCCL may pick the wrong NIC across nodes."),
    "pit_nccl_roce_gid": _("RoCE data NIC {nic}: NCCL needs the RoCE v2 GID."),
    "pit_nccl_tcp": _("Plain Ethernet/TCP between nodes: stop NCCL probing InfiniBand."),
    "pit_nccl_debug": _("Diagnose NCCL start-up problems with NCCL_DEBUG=INFO."),
    "pit_ray_version": _("Ray must be the version the vLLM image ships on every node."),
    "pit_ray_num_gpus": _(
        "Ray num_gpus must equal TP×PP = {gpus_per_replica}, or tasks hang pending."
    ),
    "pit_ray_start_num_gpus": _("ray start needs an explicit --num-gpus."),
    "pit_ray_head_light": _("Put the Ray head on the lighter machine and cap its memory."),
    "pit_ray_logs": _("Worker logs are scattered across nodes in Ray mode."),
    "pit_gpu_util_shared": _("Something else may share these GPUs (pool kind {pool_kind})."),
    "pit_docker_ipc": _("Docker limits shared memory to 64 MB by default."),
    "pit_weights_every_node": _(
        "Weights must be readable on every node; NFS bandwidth can stall loading."
    ),
    "pit_pin_versions": _("Unpinned images drift between nodes."),
    "pit_low_kv_headroom": _(
        "Only {max_concurrency} sequences of {max_model_len} tokens fit per replica (target "
        "{per_replica} per replica)."
    ),
    "pit_slow_link_cross_tp": _(
        "Tensor parallelism across a {link_gbps} Gb/s link costs {comm_ms} ms per decode step."
    ),
    "pit_link_below_10gbe": _("The cross-node link is {link_gbps} Gb/s, below 10 GbE."),
    "pit_no_data_nic": _(
        "Node {hostname} has no data NIC recorded; NCCL_SOCKET_IFNAME cannot be set for it."
    ),
    "pit_cold_start": _(
        "Loading {weights_gib} GiB of weights takes about {cold_start_s} s: scaling to zero "
        "replicas times clients out."
    ),
    "pit_ray_max_restarts": _(
        "Actor max_restarts defaults to 0, and a restart does not resume in-flight streams."
    ),
    "pit_prefix_caching": _(
        "Dynamic text at the start of prompts (timestamps, user ids) kills prefix-cache hits."
    ),
    "pit_needs_quantized_checkpoint": _(
        "vLLM cannot quantize to {dtype} on the fly: serve a pre-quantized checkpoint."
    ),
    "pit_nnodes_with_ray": _("Never combine --nnodes with --distributed-executor-backend ray."),
}

# Pitfall id -> translated action template.
ACTIONS: dict[str, Any] = {
    "pit_nccl_socket_ifname": _(
        "Set NCCL_SOCKET_IFNAME={nic} and GLOO_SOCKET_IFNAME on every node."
    ),
    "pit_nccl_roce_gid": _("Set NCCL_IB_GID_INDEX=3."),
    "pit_nccl_tcp": _("Set NCCL_IB_DISABLE=1."),
    "pit_nccl_debug": _("Start once with NCCL_DEBUG=INFO and check which interface NCCL chose."),
    "pit_ray_version": _("Run ray start from the same image as vLLM ({image})."),
    "pit_ray_num_gpus": _(
        "Keep ray_actor_options.num_gpus = {gpus_per_replica}; compare it with TP×PP when "
        "an actor init times out."
    ),
    "pit_ray_start_num_gpus": _("Use the generated ray start lines (--num-gpus={gpus_per_node})."),
    "pit_ray_head_light": _(
        "Start the head on {head} (the lighter machine) with its object store capped "
        "(--object-store-memory)."
    ),
    "pit_ray_logs": _("Collect worker logs centrally (e.g. ship /tmp/ray/session_latest/logs)."),
    "pit_gpu_util_shared": _("Lower --gpu-memory-utilization to 0.85."),
    "pit_docker_ipc": _(
        "Run containers with --ipc=host (or --shm-size of 8–32g) and --network host."
    ),
    "pit_weights_every_node": _("Pre-copy the weights to local disk on every node, same path."),
    "pit_pin_versions": _("Pin the image tag ({image}) on every node."),
    "pit_low_kv_headroom": _("Lower max_model_len, use an fp8 KV cache, or add replicas."),
    "pit_slow_link_cross_tp": _("Keep TP inside a node; use PP or replicas across nodes."),
    "pit_link_below_10gbe": _("Quantize or pick a smaller model before spanning nodes."),
    "pit_no_data_nic": _("Record the data NIC of {hostname} in the inventory."),
    "pit_cold_start": _("Keep min_replicas ≥ 1 and raise the start-up timeout, or pre-warm."),
    "pit_ray_max_restarts": _("Set max_restarts explicitly and make clients retry failed streams."),
    "pit_prefix_caching": _("Put dynamic text last in prompts."),
    "pit_needs_quantized_checkpoint": _(
        "Use an {dtype} checkpoint (AWQ/GPTQ/compressed-tensors) of the model."
    ),
    "pit_nnodes_with_ray": _("The generated commands use one or the other, never both."),
}

# DOMAIN.md rules, as users read them next to a reason. Anchor -> (heading, rule text).
RULES: dict[str, tuple[Any, Any]] = {
    "rule-1": (
        _("§1 Words"),
        _(
            "TP splits every weight matrix across GPUs and all-reduces twice per layer, so it "
            "needs NVLink-class bandwidth; PP splits the layers into stages and sends one "
            "activation per stage boundary; replicas are full copies with no traffic between "
            "them, behind a load balancer."
        ),
    ),
    "rule-2": (
        _("§2 Hard numbers"),
        _(
            "Cross-node links are an order of magnitude slower than NVLink (25 GbE ≈ 2 GB/s "
            "effective for NCCL, NVLink ≥ 600 GB/s). Weights ≈ parameters × bytes per "
            "parameter; vLLM takes gpu_memory_utilization of each GPU, subtracts weights, "
            "activation peak and non-torch memory, and the rest is the KV cache in blocks of "
            "16 tokens. The planner follows the arithmetic, not an article's claim."
        ),
    ),
    "rule-3": (
        _("§3 The three routes"),
        _(
            "Decision order: does it fit one machine (after quantization if acceptable)? Then "
            "one node, and with two machines two replicas behind a balancer. If it must span "
            "nodes, check the link first. Frequent model changes or shared resources point to "
            "Ray Serve."
        ),
    ),
    "rule-3-route-a": (
        _("§3 Route A: replicas inside nodes"),
        _(
            "Every replica inside one node, TP over NVLink, replicas behind Nginx (least_conn) "
            "or another gateway: no cross-node traffic, isolated failure domains, near-linear "
            "throughput. Precondition: weights and KV cache for the target context fit a node."
        ),
    ),
    "rule-3-route-b": (
        _("§3 Route B: one instance across nodes"),
        _(
            "Cross-node TP, or TP per node × PP across nodes (gentler on the network), with the "
            "mp or ray backend. Use only when memory forces it; below 10 GbE quantize or pick a "
            "smaller model, 25 GbE works with care, 400 Gb InfiniBand is comfortable."
        ),
    ),
    "rule-3-route-c": (
        _("§3 Route C: Ray Serve pool"),
        _(
            "Many models sharing a GPU pool, fluctuating traffic, self-healing. num_gpus must "
            "equal TP × PP of the engine inside; keep min_replicas ≥ 1 because of cold starts; "
            "actor restarts do not resume in-flight streams."
        ),
    ),
    "rule-4": (
        _("§4 Signals for and against Ray"),
        _(
            "For Ray: models change often, several models share one pool, traffic swings "
            "widely, a self-healing SLO, Ray already runs here, cross-node GPUs without "
            "hand-managed NCCL. One hit is the threshold to consider Ray. Against: one or two "
            "fixed machines with a fixed model, steady traffic, an existing gateway, "
            "quantization fits one node, no Ray operations experience."
        ),
    ),
    "rule-5": (
        _("§5 Shared pools and placement"),
        _(
            "Dedicated GPUs already reserved by a platform: mp is enough. A shared pool needs "
            "the whole group reserved atomically; a Ray placement-group bundle must fit on one "
            'node, so two {"GPU": 4} bundles place on 2 × 4 GPUs where one {"GPU": 8} never does.'
        ),
    ),
    "rule-6": (
        _("§6 Pitfalls"),
        _(
            "NCCL on the wrong NIC, RoCE GID index, InfiniBand probing on plain TCP, Ray version "
            "drift, num_gpus ≠ TP, GPU memory shared with something else, Docker shared memory, "
            "weights readable on every node, unpinned images, prompt prefixes that defeat the "
            "prefix cache."
        ),
    ),
    "rule-7": (
        _("§7 The decision record"),
        _(
            "Record who allocates the GPUs, who starts the workers, the concrete benefit of "
            "Ray, how traffic comes back after a failure and how the choice is proven, then one "
            "verifiable sentence. Evidence is measured, never assumed."
        ),
    ),
    "rule-8": (
        _("§8 Scenarios"),
        _(
            "The planner is checked against six scenarios from the source articles (S1–S5), "
            "including where the articles disagree with the arithmetic."
        ),
    ),
}

SEVERITY_LABELS: dict[str, Any] = {
    "high": _("high"),
    "medium": _("medium"),
    "low": _("low"),
    "info": _("info"),
}
STRENGTH_LABELS: dict[str, Any] = {
    "low": _("low"),
    "medium": _("medium"),
    "medium-high": _("medium-high"),
    "high": _("high"),
}

ROUTE_NAMES: dict[str, Any] = {
    "single": _("Single GPU/node"),
    "A": _("Route A"),
    "B": _("Route B"),
    "C": _("Route C"),
}


def route_name(route: str) -> str:
    return str(ROUTE_NAMES.get(route, route))


def nothing_fits_sentence(result: PlanResult) -> str:
    """Return what a plan where no layout fits says instead of a recommendation."""
    return _(
        "No layout on the offered machines starts %(model)s at %(ctx)s tokens, even "
        "quantized: add GPUs, shorten the context or pick a smaller model."
    ) % {
        "model": result.model.name,
        "ctx": count(result.model.max_model_len),
    }


def recommendation_sentence(result: PlanResult) -> str:
    """Return the recommendation in one translated sentence (the engine's summary is English)."""
    rec, best = result.recommendation, result.best
    if not rec.fits:
        # The engine's best effort that does not fit is no layout to serve with.
        return nothing_fits_sentence(result)
    if best is None:
        return rec.summary
    return _(
        "%(route)s: serve %(model)s with %(dtype)s weights as TP%(tp)s × PP%(pp)s × "
        "%(replicas)s replica(s) on %(gpu)s (%(hosts)s); each replica holds %(kv)s KV tokens, "
        "%(seqs)s sequences of %(ctx)s tokens; ≈ %(tok)s output tok/s at the target load "
        "(TTFT ≈ %(ttft)s ms, inter-token ≈ %(itl)s ms); executor %(backend)s, "
        "balancer %(balancer)s."
    ) % {
        "route": route_name(rec.route),
        "model": result.model.name,
        "dtype": rec.weight_dtype,
        "tp": rec.tp,
        "pp": rec.pp,
        "replicas": rec.replicas,
        "gpu": best.gpu,
        "hosts": ", ".join(result.hosts),
        "kv": best.kv_tokens_per_replica,
        "seqs": round(best.max_concurrency_per_replica, 1),
        "ctx": result.model.max_model_len,
        "tok": round(best.output_throughput_tok_s),
        "ttft": round(best.ttft_ms),
        "itl": round(best.itl_ms, 1),
        "backend": rec.executor_backend,
        "balancer": rec.balancer,
    }


_SECTION = re.compile(r"§(\d)(?:\s+Route\s+([ABC]))?")


@dataclass(frozen=True, slots=True)
class RuleRef:
    anchor: str
    label: str
    heading: str
    text: str


@dataclass(frozen=True, slots=True)
class RenderedMessage:
    """A message ready for a template: translated text, its rules and the raw engine data."""

    id: str
    text: str
    rule: str
    rules: tuple[RuleRef, ...]
    action: str = ""
    severity: str = ""
    strength: str = ""
    direction: str = ""
    hit: bool | None = None

    @property
    def severity_label(self) -> str:
        return str(SEVERITY_LABELS.get(self.severity, self.severity))

    @property
    def strength_label(self) -> str:
        return str(STRENGTH_LABELS.get(self.strength, self.strength))


def rule_refs(rule: str) -> tuple[RuleRef, ...]:
    """Return the DOMAIN.md rules a rule label such as '§2, §3 Route B (000 §2.2)' cites."""
    own = rule.split("(")[0]
    refs: list[RuleRef] = []
    for number, route in _SECTION.findall(own):
        anchor = f"rule-{number}-route-{route.lower()}" if route else f"rule-{number}"
        if anchor not in RULES:
            anchor = f"rule-{number}"
        if anchor in RULES and anchor not in {r.anchor for r in refs}:
            heading, text = RULES[anchor]
            label = (
                _("§%(section)s Route %(route)s") % {"section": number, "route": route}
                if route
                else f"§{number}"
            )
            refs.append(
                RuleRef(anchor=anchor, label=str(label), heading=str(heading), text=str(text))
            )
    return tuple(refs)


def _format(template: Any, params: Mapping[str, Any], english: str) -> str:
    """Render `template` with `params`; fall back to the engine's English when it cannot."""
    if template is None:
        return english
    try:
        if english and (get_language() or "en").split("-")[0] == "en":
            # Same language as the engine: its own text is authoritative, so wording never drifts.
            return english
        # Params the engine used but did not send (an action's image tag) are read back from its
        # English; English phrases inside params are translated too (planner/engine_texts_i18n).
        values = {**engine_i18n.recover_params(_source(template), english), **params}
        return str(template).format(**engine_i18n.localize_params(values))
    except (KeyError, IndexError, ValueError, AttributeError):
        return english


def _source(template: Any) -> str:
    """Return the English msgid of a lazily translated template."""
    with override("en"):
        return str(template)


def render_text(msg_id: str, params: Mapping[str, Any] | None, english: str = "") -> str:
    """Return the translated text of an engine message id."""
    return _format(MESSAGES.get(msg_id), params or {}, english)


def render_action(msg_id: str, params: Mapping[str, Any] | None, english: str = "") -> str:
    """Return the translated action of a pitfall id."""
    return _format(ACTIONS.get(msg_id), params or {}, english)


def render_message(message: Message | Signal | Pitfall) -> RenderedMessage:
    """Return a reason, signal or pitfall from the engine rendered for the current language."""
    params = message.params
    action = getattr(message, "action", "")
    return RenderedMessage(
        id=message.id,
        text=render_text(message.id, params, message.text),
        rule=message.rule,
        rules=rule_refs(message.rule),
        action=render_action(message.id, params, action) if action else "",
        severity=str(getattr(message, "severity", "")),
        strength=str(getattr(message, "strength", "")),
        direction=str(getattr(message, "direction", "")),
        hit=getattr(message, "hit", None),
    )


def render_messages(messages: Iterable[Message | Signal | Pitfall]) -> list[RenderedMessage]:
    """Return every message rendered."""
    return [render_message(m) for m in messages]
