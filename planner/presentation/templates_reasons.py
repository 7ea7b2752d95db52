"""The English templates of the plan's reasons: node choice, fit, layout, quantization, the Ray
verdict, the pinned layout and the SLO checks."""

from __future__ import annotations

from planner.engine.messages import N_, NP_, Code
from planner.presentation.template_types import (
    Article,
    Rule,
    Template,
    counted,
    memory_rule,
    speed_rule,
)

REASON_TEMPLATES: dict[Code, Template] = {
    Code.NODE_SELECTION: counted(
        NP_(
            "Chose {nodes_used} of {nodes_offered} node with {gpu} GPUs: same GPU type inside "
            "every replica, fastest data link first ({link_gbps} Gb/s {link_kind}), fewest nodes "
            "that serve {concurrency} concurrent sequences.",
            "Chose {nodes_used} of {nodes_offered} nodes with {gpu} GPUs: same GPU type inside "
            "every replica, fastest data link first ({link_gbps} Gb/s {link_kind}), fewest nodes "
            "that serve {concurrency} concurrent sequences.",
        ),
        "nodes_offered",
        rules=(Rule.ROUTES,),
        sources=(Article("000", "2"), Article("002", "3")),
    ),
    Code.FITS_ONE_GPU: Template(
        N_(
            "The model fits one GPU ({weights_gib} GiB weights, {kv_tokens} KV tokens): plain "
            "local vLLM, no Ray, no tensor parallelism."
        ),
        rules=(Rule.ROUTES,),
        sources=(Article("004", "6.3"),),
    ),
    Code.FITS_ONE_NODE: Template(
        N_(
            "The model fits one node at TP{tp} ({weights_gib} GiB weights per GPU, room for "
            "{max_concurrency} sequences of {max_model_len} tokens per replica): keep every "
            "replica inside a node, over NVLink/PCIe, no cross-node traffic."
        ),
        rules=(Rule.ROUTES,),
        sources=(Article("000", "5.5"),),
    ),
    Code.REPLICAS_BEHIND_BALANCER: Template(
        N_(
            "{replicas} replicas of TP{tp}×PP{pp} behind {balancer} ({balancer_config}): isolated"
            " failure domains and near-linear scaling; at saturation {replicas} replicas give "
            "{capacity_ratio}× one replica, at your {concurrency} concurrent sequences "
            "{workload_ratio}× (decode is HBM-bound, so one replica's larger batch costs little "
            "more per step)."
        ),
        rules=(Rule.ROUTE_A,),
        sources=(Article("000", "2"), Article("002", "3")),
    ),
    Code.LAYOUT_CHOICE: Template(
        N_(
            "TP{tp}×PP{pp}×{replicas} scores best: ≈{throughput_tok_s} output tok/s at "
            "{concurrency} concurrent, {itl_ms} ms per output token. Next: {runner_up} (score "
            "{runner_up_score}, {runner_up_tok_s} tok/s){runner_up_note}."
        ),
        rules=(Rule.ROUTES,),
        sources=(Article("000", "2"),),
    ),
    Code.CROSS_NODE_WORSE: Template(
        N_(
            # "75–85% of" is no %-placeholder (xgettext would flag the msgid python-format).
            # xgettext:no-python-format
            "{layout} across nodes is ranked below: {comm_ms} ms of all-reduce per decode step "
            "over {link_gbps} Gb/s against {compute_ms} ms of HBM-bound compute, {slowdown}× "
            "slower per step than {best}. Some two-node write-ups report cross-node TP at "
            "75–85% of NVLink; the arithmetic does not support that on this link: measure your "
            "link bandwidth and enter it to recalibrate."
        ),
        rules=(Rule.NUMBERS, Rule.ROUTES),
        sources=(Article("000", "2.2"), Article("002", "5")),
    ),
    Code.MUST_SPAN_NODES: Template(
        N_(
            "No single node serves the load: one node holds {single_node_concurrency} sequences "
            "of {max_model_len} tokens, the target is {concurrency}; one instance must span "
            "{nodes} nodes ({gpus} GPUs, {span_concurrency} sequences)."
        ),
        rules=(Rule.ROUTE_B,),
        sources=(Article("000", "5.5"),),
    ),
    Code.PP_OVER_CROSS_TP: Template(
        N_(
            "TP{tp}×PP{pp} is preferred to TP{cross_tp} across nodes: PP sends one activation per"
            " stage boundary ({pp_comm_ms} ms per step) while cross-node TP all-reduces twice per"
            " layer ({tp_comm_ms} ms per step)."
        ),
        rules=(Rule.WORDS, Rule.ROUTE_B),
        sources=(Article("000", "2"),),
    ),
    Code.NETWORK_CHECK: Template(
        N_(
            "Cross-node link is {link_gbps} Gb/s {link_kind} (≈{effective_gbs} GB/s effective): "
            "{verdict}."
        ),
        rules=(Rule.ROUTE_B,),
        sources=(Article("000", "5.5"),),
    ),
    Code.QUANTIZE_FIRST: Template(
        N_(
            "{requested_dtype} weights ({requested_weights_gib} GiB per GPU) do not fit; {dtype} "
            "weights take {weights_gib} GiB and leave {kv_tokens} KV tokens. Quantize first, if "
            "the accuracy cost is acceptable for your task: measure it on your own evaluation set"
            " before serving."
        ),
        rules=(Rule.NUMBERS, Rule.ROUTES),
        sources=(Article("000", "4.4"), Article("000", "5.5")),
    ),
    Code.VLLM_VERSION_ASSUMED: memory_rule(
        N_(
            "No vLLM version was given: the memory figures and the speeds assume vLLM "
            "{vllm_version}, the version the generated configs run. Memory profiling changed "
            "between releases (KV capacity by up to a fifth), and so did the engine's host work "
            "(by several times before 0.8): give the version you run."
        )
    ),
    Code.V0_ENGINE_HOST: speed_rule(
        N_(
            "vLLM {vllm_version} runs the V0 engine, and the speeds follow it: between two "
            "forward passes its host spends {step_ms} ms per step and {per_seq_ms} ms per running "
            "sequence (V1, the engine from vLLM 0.8, spends {v1_per_seq_ms} ms per sequence), "
            "which caps a fast GPU under load. Upgrading vLLM is the cheapest speed-up here."
        )
    ),
    Code.V0_PROMPTS_FIRST: speed_rule(
        N_(
            "vLLM {vllm_version} does not chunk prompts below a 32K context: a step runs either "
            "whole waiting prompts (up to {max_num_batched_tokens} tokens) or the decodes, prompts "
            "first, so a burst stalls every request already decoding and TPOT rises with it."
        )
    ),
    Code.V0_ON_PRE_AMPERE: speed_rule(
        N_(
            "The {gpu} is below compute capability 8.0, where vLLM 0.8 to 0.10.1 falls back to "
            'the V0 engine (its log says "Compute Capability < 8.0 is not supported by the V1 '
            'Engine. Falling back to V0."): the memory and speed figures for vLLM '
            "{vllm_version} follow V0. vLLM 0.10.2 and later run V1 on it."
        )
    ),
    Code.FP16_ON_PRE_AMPERE: speed_rule(
        N_(
            "The {gpu} has no bf16 (compute capability below 8.0), so the model's bf16 weights "
            "are served as fp16: the configs pass --dtype half, which vLLM releases before the "
            "automatic fallback need to start there. Both take two bytes per parameter, so "
            "memory and speed figures are the same."
        )
    ),
    Code.MEMORY_RULES: memory_rule(
        N_(
            "KV capacity follows the memory profiling of vLLM {vllm_version} ({engine}): "
            "{cuda_graph_gib} GiB of CUDA-graph memory per GPU subtracted before the KV budget "
            "(vLLM does so from 0.21 on), {non_torch_gib} GiB of non-torch memory per GPU (NCCL "
            "and custom all-reduce buffers at TP ≥ 2) and a profile run of {profile_tokens} "
            "tokens."
        )
    ),
    Code.CUDA_GRAPHS_SKIPPED_PLATFORM: memory_rule(
        N_(
            "vLLM {vllm_version} estimates CUDA-graph memory only on CUDA, not on {vendor} GPUs "
            "(ROCm is skipped from 0.21 to 0.25, vLLM PR 36720), so none is subtracted before "
            "the KV budget here."
        )
    ),
    Code.CUDA_GRAPHS_RUNNER_V2: memory_rule(
        N_(
            "vLLM {vllm_version} runs dense models on Model Runner V2, whose CUDA-graph memory "
            "estimate is 0 (vLLM issue 49224), so none is subtracted before the KV budget."
        )
    ),
    Code.QUANTIZE_FEWER_NODES: counted(
        NP_(
            "{dtype} weights fit one replica in {nodes} node where {requested_dtype} needs "
            "{requested_nodes} over a {link_gbps} Gb/s link: {weights_gib} GiB per GPU on {gpus} "
            "GPUs instead of {requested_weights_gib} GiB on {requested_gpus}, {kv_tokens} KV "
            "tokens per replica. Quantize first, if the accuracy cost is acceptable for your "
            "task: measure it on your own evaluation set before serving.",
            "{dtype} weights fit one replica in {nodes} nodes where {requested_dtype} needs "
            "{requested_nodes} over a {link_gbps} Gb/s link: {weights_gib} GiB per GPU on {gpus} "
            "GPUs instead of {requested_weights_gib} GiB on {requested_gpus}, {kv_tokens} KV "
            "tokens per replica. Quantize first, if the accuracy cost is acceptable for your "
            "task: measure it on your own evaluation set before serving.",
        ),
        "nodes",
        rules=(Rule.NUMBERS, Rule.ROUTES),
        sources=(Article("000", "4.4"), Article("000", "5.5")),
    ),
    Code.SMALL_MODEL_REPLICAS: Template(
        N_(
            # "75–85% of" is no %-placeholder (xgettext would flag the msgid python-format).
            # xgettext:no-python-format
            "A small model on a large fleet: {replicas} replicas of TP{tp} rather than "
            "TP{larger_tp}×{larger_replicas} — more independent failure domains and no all-reduce"
            " on every layer, at {share_pct}% of its output throughput ({throughput_tok_s} "
            "against {larger_tok_s} tok/s at {concurrency} concurrent sequences)."
        ),
        rules=(Rule.ROUTE_A,),
        sources=(Article("000", "2"),),
    ),
    Code.LARGER_TP_WINS: Template(
        N_(
            # "75–85% of" is no %-placeholder (xgettext would flag the msgid python-format).
            # xgettext:no-python-format
            "TP{tp} replicas would fit, but reach only {share_pct}% of TP{larger_tp}'s output "
            "throughput ({throughput_tok_s} against {larger_tok_s} tok/s at {concurrency} "
            "concurrent sequences): the larger tensor-parallel size is kept."
        ),
        rules=(Rule.ROUTE_A,),
        sources=(Article("000", "2"),),
    ),
    Code.QUANTIZED_BARELY: Template(
        N_(
            "{dtype} weights ({weights_gib} GiB) fit only barely: they leave {kv_tokens} KV "
            "tokens ({max_concurrency} sequences of {max_model_len} tokens) — too little room to "
            "serve."
        ),
        rules=(Rule.NUMBERS,),
        sources=(Article("000", "4.4"),),
    ),
    Code.RAY_ROUTE_C: counted(
        NP_(
            "Ray Serve is recommended: {hits} signal for Ray hit ({signals}); Serve "
            "autoscaling with min_replicas ≥ 1 and num_gpus = TP×PP = {gpus_per_replica}.",
            "Ray Serve is recommended: {hits} signals for Ray hit ({signals}); Serve "
            "autoscaling with min_replicas ≥ 1 and num_gpus = TP×PP = {gpus_per_replica}.",
        ),
        "hits",
        rules=(Rule.ROUTE_C,),
        sources=(Article("000", "3"), Article("002", "4")),
    ),
    Code.RAY_NOT_NEEDED: counted(
        NP_(
            "No Ray: {hits_for} signal for Ray hit against {hits_against} against; with fixed "
            "machines and a fixed model, mp and a balancer are enough.",
            "No Ray: {hits_for} signals for Ray hit against {hits_against} against; with fixed "
            "machines and a fixed model, mp and a balancer are enough.",
        ),
        "hits_for",
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "3–4"),),
    ),
    Code.RAY_CONSIDER: counted(
        NP_(
            "{hits} signal for Ray hit ({signals}): one hit is the threshold to consider Ray "
            "Serve; it is not recommended yet: {hits_against} against it hit and no "
            "high-strength signal does. Re-plan with the operations you expect in six months.",
            "{hits} signals for Ray hit ({signals}): one hit is the threshold to consider Ray "
            "Serve; it is not recommended yet: {hits_against} against it hit and no "
            "high-strength signal does. Re-plan with the operations you expect in six months.",
        ),
        "hits",
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "3"),),
    ),
    Code.EXECUTOR_BACKEND: Template(
        N_("Executor backend {backend}: {why}."),
        rules=(Rule.ROUTES, Rule.PLACEMENT),
        sources=(Article("001"),),
    ),
    Code.V1_CHUNKED_PREFILL: Template(
        N_(
            "vLLM V1 profiles at most max_num_batched_tokens={max_num_batched_tokens} tokens with"
            " chunked prefill, not a full {max_model_len}-token prefill, so {layout} starts and "
            "holds {max_concurrency} such sequences. Reports of TP4 running out of memory at "
            "64K tokens come from vLLM V0, which profiled the full length."
        ),
        rules=(Rule.SCENARIOS,),
        sources=(Article("002", "5"),),
    ),
    Code.PINNED_LAYOUT: Template(
        N_(
            "Your layout TP{tp}×PP{pp}×{replicas}: {verdict}; {throughput_tok_s} tok/s against "
            "{best_tok_s} tok/s for the recommendation (score {score} vs {best_score})."
        ),
        rules=(Rule.ROUTES,),
    ),
    Code.PINNED_LAYOUT_NO_SPEED: Template(
        N_("Your layout TP{tp}×PP{pp}×{replicas}: {verdict}; it never starts, so it has no speed.")
    ),
    Code.SGLANG_PREFIX: Template(
        N_("Heavy shared prefixes (RAG/agents): also evaluate SGLang (RadixAttention)."),
        rules=(Rule.ROUTES,),
        sources=(Article("004", "6.3"),),
    ),
    Code.NOTHING_FITS: Template(
        N_(
            "No layout on the offered hardware starts this model at {max_model_len} tokens, even "
            "quantized to int4: add GPUs, shorten max_model_len or pick a smaller model."
        ),
        rules=(Rule.ROUTES,),
        sources=(Article("000", "5.5"),),
    ),
    Code.NOTHING_FITS_AS_SET: Template(
        N_(
            "No layout on the offered hardware starts this model at {max_model_len} tokens as "
            "it is set: {reason}. Change that setting before adding GPUs or shortening the "
            "context."
        ),
        rules=(Rule.ROUTES,),
        sources=(Article("000", "5.5"),),
    ),
    Code.LOAD_NOT_SERVED: Template(
        N_(
            "The best layout holds {max_concurrency_total} concurrent sequences of "
            "{max_model_len} tokens, below the target {concurrency}: requests will queue (or "
            "lower max_model_len)."
        ),
        rules=(Rule.NUMBERS,),
    ),
    Code.SLO_MISSED: Template(
        N_("Estimated {metric} {value_ms} ms exceeds the SLO {slo_ms} ms."),
        rules=(Rule.RECORD,),
    ),
}
