"""Every English template of the engine's messages, written once and marked for extraction.

`TEMPLATES` maps each message code (planner/engine/messages.py) to its English text, the action
of a pitfall, the short name of a signal, and the DOMAIN.md rules and source articles it cites.
`N_` and `NC_` only mark the strings: `manage.py makemessages` (core/management/commands/
makemessages.py) tells xgettext about them, so every template has one catalog entry, and
planner/presentation/messages.py renders it in the reader's language. Pure Python: the engine's
own tests and the API read English from here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from planner.engine.messages import N_, NC_, NP_, Code, Term


class Rule(StrEnum):
    """A DOMAIN.md section, by its anchor on the rules page."""

    WORDS = "rule-1"
    NUMBERS = "rule-2"
    ROUTES = "rule-3"
    ROUTE_A = "rule-3-route-a"
    ROUTE_B = "rule-3-route-b"
    ROUTE_C = "rule-3-route-c"
    SIGNALS = "rule-4"
    PLACEMENT = "rule-5"
    PITFALLS = "rule-6"
    RECORD = "rule-7"
    SCENARIOS = "rule-8"


@dataclass(frozen=True, slots=True)
class Article:
    """A source article of DOMAIN.md (../shared/seeds/), optionally one of its sections."""

    number: str
    section: str = ""


@dataclass(frozen=True, slots=True)
class Issue:
    """An issue of this project that settled a rule."""

    number: int


@dataclass(frozen=True, slots=True)
class Template:
    text: str
    action: str = ""  # a pitfall's: what to do about it
    name: str = ""  # a signal's short name, in lists of the signals that hit
    rules: tuple[Rule, ...] = ()
    sources: tuple[Article | Issue, ...] = ()
    translated: bool = True  # False: the text is shown as stored (legacy English)
    plural: str = ""  # the English plural of `text`, chosen by the parameter named `count`
    count: str = ""


def counted(
    forms: tuple[str, str],
    count: str,
    *,
    rules: tuple[Rule, ...] = (),
    sources: tuple[Article | Issue, ...] = (),
) -> Template:
    """Return a template with a singular and a plural form (NP_), chosen by param `count`."""
    return Template(forms[0], plural=forms[1], count=count, rules=rules, sources=sources)


def _memory_rule(text: str) -> Template:
    """Return the template of a sentence on vLLM's memory profiling (issue 13's figures)."""
    return Template(text, rules=(Rule.NUMBERS,), sources=(Issue(13),))


TEMPLATES: dict[Code, Template] = {
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
    Code.VLLM_VERSION_ASSUMED: _memory_rule(
        N_(
            "No vLLM version was given: the memory figures assume vLLM {vllm_version}, the "
            "version the generated configs run. Memory profiling changed between releases (KV "
            "capacity by up to a fifth): give the version you run."
        )
    ),
    Code.MEMORY_RULES: _memory_rule(
        N_(
            "KV capacity follows the memory profiling of vLLM {vllm_version} ({engine}): "
            "{cuda_graph_gib} GiB of CUDA-graph memory per GPU subtracted before the KV budget "
            "(vLLM does so from 0.21 on), {non_torch_gib} GiB of non-torch memory per GPU (NCCL "
            "and custom all-reduce buffers at TP ≥ 2) and a profile run of {profile_tokens} "
            "tokens."
        )
    ),
    Code.CUDA_GRAPHS_SKIPPED_PLATFORM: _memory_rule(
        N_(
            "vLLM {vllm_version} estimates CUDA-graph memory only on CUDA, not on {vendor} GPUs "
            "(ROCm is skipped from 0.21 to 0.25, vLLM PR 36720), so none is subtracted before "
            "the KV budget here."
        )
    ),
    Code.CUDA_GRAPHS_RUNNER_V2: _memory_rule(
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
    Code.SIG_MODELS_CHANGE_OFTEN: Template(
        N_("Models change often: {why}."),
        name=N_("models change often"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "3"),),
    ),
    Code.SIG_MULTI_MODEL_POOL: Template(
        N_("Several models share one GPU pool: {why}."),
        name=N_("several models share one pool"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "3"),),
    ),
    Code.SIG_TRAFFIC_SWINGS: Template(
        N_("Traffic swings widely ({shape}): {why}."),
        name=N_("traffic swings widely"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "3"),),
    ),
    Code.SIG_SELF_HEALING_SLO: Template(
        N_("Self-healing SLO: {why}."),
        name=N_("a self-healing SLO"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "4"),),
    ),
    Code.SIG_RAY_IN_USE: Template(
        N_("Ray already runs other workloads here: {why}."),
        name=N_("Ray already runs here"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "4"),),
    ),
    Code.SIG_CROSS_NODE_NO_NCCL: Template(
        N_("Cross-node GPUs without hand-managed NCCL: {why}."),
        name=N_("cross-node GPUs without hand-managed NCCL"),
        rules=(Rule.SIGNALS,),
        sources=(Article("002", "4"),),
    ),
    Code.SIG_FIXED_SMALL_FLEET: Template(
        N_("One or two fixed machines, fixed model: {why}."),
        name=N_("one or two fixed machines"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "4"),),
    ),
    Code.SIG_STEADY_TRAFFIC: Template(
        N_("Steady traffic: {why}."),
        name=N_("steady traffic"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "4"),),
    ),
    Code.SIG_GATEWAY_AVAILABLE: Template(
        N_("A gateway already distributes requests: {why}."),
        name=N_("an existing gateway"),
        rules=(Rule.SIGNALS,),
        sources=(Article("002", "4"),),
    ),
    Code.SIG_QUANTIZATION_FITS: Template(
        N_("Quantization fits the model on one card/node: {why}."),
        name=N_("quantization fits one node"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "4"),),
    ),
    Code.SIG_NO_RAY_EXPERIENCE: Template(
        N_("No Ray operations experience: {why}."),
        name=N_("no Ray operations experience"),
        rules=(Rule.SIGNALS,),
        sources=(Article("000", "4"),),
    ),
    Code.PIT_NCCL_SOCKET_IFNAME: Template(
        N_("NCCL may pick the wrong NIC across nodes."),
        action=N_("Set NCCL_SOCKET_IFNAME={nic} and GLOO_SOCKET_IFNAME on every node."),
        rules=(Rule.PITFALLS,),
        sources=(Article("000", "6"), Article("002", "6")),
    ),
    Code.PIT_NCCL_ROCE_GID: Template(
        N_("RoCE data NIC {nic}: NCCL needs the RoCE v2 GID."),
        action=N_("Set NCCL_IB_GID_INDEX=3."),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_NCCL_TCP: Template(
        N_("Plain Ethernet/TCP between nodes: stop NCCL probing InfiniBand."),
        action=N_("Set NCCL_IB_DISABLE=1."),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_NCCL_DEBUG: Template(
        N_("Diagnose NCCL start-up problems with NCCL_DEBUG=INFO."),
        action=N_("Start once with NCCL_DEBUG=INFO and check which interface NCCL chose."),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_RAY_VERSION: Template(
        N_("Ray must be the version the vLLM image ships on every node."),
        action=N_("Run ray start from the same image as vLLM ({image})."),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_RAY_NUM_GPUS: Template(
        N_("Ray num_gpus must equal TP×PP = {gpus_per_replica}, or tasks hang pending."),
        action=N_(
            "Keep ray_actor_options.num_gpus = {gpus_per_replica}; compare it with TP×PP when an "
            "actor init times out."
        ),
        rules=(Rule.ROUTE_C, Rule.PITFALLS),
        sources=(Article("001"), Article("002", "6")),
    ),
    Code.PIT_RAY_START_NUM_GPUS: Template(
        N_("ray start needs an explicit --num-gpus."),
        action=N_("Use the generated ray start lines (--num-gpus={gpus_per_node})."),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_RAY_HEAD_LIGHT: Template(
        N_("Put the Ray head on the lighter machine and cap its memory."),
        action=N_(
            "Start the head on {head} (the lighter machine) with its object store capped "
            "(--object-store-memory)."
        ),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_RAY_LOGS: Template(
        N_("Worker logs are scattered across nodes in Ray mode."),
        action=N_("Collect worker logs centrally (e.g. ship /tmp/ray/session_latest/logs)."),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_GPU_UTIL_SHARED: Template(
        N_("Something else may share these GPUs (pool kind {pool_kind})."),
        action=N_("Lower --gpu-memory-utilization to 0.85."),
        rules=(Rule.PITFALLS,),
        sources=(Article("004", "4"),),
    ),
    Code.PIT_DOCKER_IPC: Template(
        N_("Docker limits shared memory to 64 MB by default."),
        action=N_("Run containers with --ipc=host (or --shm-size of 8–32g) and --network host."),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_WEIGHTS_EVERY_NODE: Template(
        N_("Weights must be readable on every node; NFS bandwidth can stall loading."),
        action=N_("Pre-copy the weights to local disk on every node, same path."),
        rules=(Rule.PITFALLS,),
        sources=(Article("000", "6"),),
    ),
    Code.PIT_PIN_VERSIONS: Template(
        N_("Unpinned images drift between nodes."),
        action=N_("Pin the image tag ({image}) on every node."),
        rules=(Rule.PITFALLS,),
        sources=(Article("002", "6"),),
    ),
    Code.PIT_LOW_KV_HEADROOM: Template(
        N_(
            "Only {max_concurrency} sequences of {max_model_len} tokens fit per replica (target "
            "{per_replica} per replica)."
        ),
        action=N_("Lower max_model_len, use an fp8 KV cache, or add replicas."),
        rules=(Rule.NUMBERS, Rule.PITFALLS),
        sources=(Article("004", "4"),),
    ),
    Code.PIT_SLOW_LINK_CROSS_TP: Template(
        N_("Tensor parallelism across a {link_gbps} Gb/s link costs {comm_ms} ms per decode step."),
        action=N_("Keep TP inside a node; use PP or replicas across nodes."),
        rules=(Rule.NUMBERS, Rule.ROUTES),
        sources=(Article("000", "2.2"),),
    ),
    Code.PIT_LINK_BELOW_10GBE: Template(
        N_("The cross-node link is {link_gbps} Gb/s, below 10 GbE."),
        action=N_("Quantize or pick a smaller model before spanning nodes."),
        rules=(Rule.ROUTES,),
        sources=(Article("000", "5.5"),),
    ),
    Code.PIT_NO_DATA_NIC: Template(
        N_("Node {hostname} has no data NIC recorded; NCCL_SOCKET_IFNAME cannot be set for it."),
        action=N_("Record the data NIC of {hostname} in the inventory."),
        rules=(Rule.PITFALLS,),
        sources=(Article("000", "6"),),
    ),
    Code.PIT_COLD_START: Template(
        N_(
            "Loading {weights_gib} GiB of weights takes about {cold_start_s} s: scaling to zero "
            "replicas times clients out."
        ),
        action=N_("Keep min_replicas ≥ 1 and raise the start-up timeout, or pre-warm."),
        rules=(Rule.NUMBERS, Rule.ROUTE_C),
        sources=(Article("000", "4"),),
    ),
    Code.PIT_RAY_MAX_RESTARTS: Template(
        N_("Actor max_restarts defaults to 0, and a restart does not resume in-flight streams."),
        action=N_("Set max_restarts explicitly and make clients retry failed streams."),
        rules=(Rule.ROUTE_C,),
        sources=(Article("001"),),
    ),
    Code.PIT_PREFIX_CACHING: Template(
        N_("Dynamic text at the start of prompts (timestamps, user ids) kills prefix-cache hits."),
        action=N_("Put dynamic text last in prompts."),
        rules=(Rule.PITFALLS,),
        sources=(Article("004", "3"),),
    ),
    Code.PIT_SIMULATION_CAPPED: Template(
        N_(
            "The serving figures come from {simulated} of the {requested} requests per replica "
            "this load sends: the simulation's cost is capped."
        ),
        action=N_(
            "Read the latency percentiles as those of the first requests; measure the whole load "
            "with a benchmark run, or plan with shorter or fewer requests."
        ),
        rules=(Rule.NUMBERS,),
    ),
    Code.PIT_NEEDS_QUANTIZED_CHECKPOINT: Template(
        N_("vLLM cannot quantize to {dtype} on the fly: serve a pre-quantized checkpoint."),
        action=N_("Use an {dtype} checkpoint (AWQ/GPTQ/compressed-tensors) of the model."),
        rules=(Rule.NUMBERS,),
        sources=(Article("000", "4.4"),),
    ),
    Code.PIT_NNODES_WITH_RAY: Template(
        N_("Never combine --nnodes with --distributed-executor-backend ray."),
        action=N_("The generated commands use one or the other, never both."),
        rules=(Rule.PLACEMENT,),
        sources=(Article("001"),),
    ),
    # phrases inside other messages
    Code.WHY_RAY_SERVE: Template(N_("Ray Serve deployments run on a Ray cluster")),
    Code.WHY_SHARED_POOL: Template(
        N_(
            "the pool is shared, so a placement group must reserve every GPU of the replica "
            "atomically"
        )
    ),
    Code.WHY_RAY_MANAGES: Template(N_("Ray already manages these nodes' processes")),
    Code.WHY_MP_ACROSS_NODES: Template(
        N_(
            "dedicated nodes: one explicit vllm serve per node (--nnodes/--node-rank/"
            "--master-addr, --headless on the workers), no Ray to operate"
        )
    ),
    Code.WHY_MP_INSIDE_NODE: Template(
        N_("every replica lives inside one node; multiprocessing workers, no Ray")
    ),
    Code.PINNED_NO_FIT: Template(N_("does not fit: {reason}")),
    Code.PINNED_NO_FIT_AT_DTYPE: Template(N_("does not fit at {dtype} weights: {reason}")),
    Code.PINNED_SHORT_OF_LOAD: Template(N_("fits but does not hold the target concurrency")),
    Code.PINNED_FITS: Template(N_("fits")),
    Code.PINNED_NO_LAYOUT: Template(N_("cannot be laid out on nodes of this size")),
    Code.PINNED_NOT_PLACEABLE: Template(N_("cannot be placed now: {reason}; {hint}")),
    Code.PIN_NO_ROOM: counted(
        NP_(
            "it needs room for {nodes} group of {gpus} GPUs on one node; the free GPUs hold "
            "{with_room} (at most {most_free} free on one node)",
            "it needs room for {nodes} groups of {gpus} GPUs, each on one node; the free GPUs "
            "hold {with_room} (at most {most_free} free on one node)",
        ),
        "nodes",
    ),
    Code.PIN_FREE_GPUS: counted(
        NP_(
            "free {gpus} GPU on {hosts} to place it",
            "free {gpus} GPUs on {hosts} to place it",
        ),
        "gpus",
    ),
    Code.PIN_NEEDS_NODES: counted(
        NP_(
            "add {nodes} node with {gpus} free GPUs to place it",
            "add {nodes} nodes with {gpus} free GPUs each to place it",
        ),
        "nodes",
    ),
    Code.STEP_BACKEND_UNCOVERED: Template(
        N_("The measured kernel tables do not cover this layout; the roofline timed it: {reason}")
    ),
    Code.STEP_BACKEND_FALLBACK: counted(
        NP_(
            "The measured kernel tables could not time {steps} engine step; the roofline "
            "timed it: {reason}",
            "The measured kernel tables could not time {steps} engine steps; the roofline "
            "timed them: {reason}",
        ),
        "steps",
    ),
    Code.RUNNER_UP_SHORT_OF_LOAD: Template(
        N_("; it cannot hold {concurrency} sequences of {max_model_len} tokens")
    ),
    Code.RUNNER_UP_SPANS_NODES: Template(N_("; its replicas span nodes")),
    Code.RUNNER_UP_HBM_BOUND: Template(
        N_(
            "; decode is bound by HBM reads of the weights, so fewer, larger replicas keep bigger "
            "batches"
        )
    ),
    Code.LINK_TOO_SLOW: Template(
        N_("below 10 GbE: quantize or pick a smaller model before spanning nodes")
    ),
    Code.LINK_WITH_CARE: Template(N_("works with care; keep TP inside nodes and PP across them")),
    Code.LINK_COMFORTABLE: Template(N_("comfortable for PP, workable for cross-node TP")),
    Code.BALANCER_NGINX: Template(
        N_("least_conn, max_fails=2 fail_timeout=5s, streaming unbuffered")
    ),
    Code.BALANCER_SERVE: Template(N_("Serve proxy on every node")),
    Code.REJECT_MEMORY: Template(N_("weights and overheads exceed the requested memory")),
    Code.REJECT_KV: Template(
        N_("KV cache holds {kv_tokens} tokens < max_model_len {max_model_len}")
    ),
    Code.REJECT_ROOM: counted(
        NP_(
            "needs {replicas} replica of {gpus} GPUs; the nodes offer room for {room}",
            "needs {replicas} replicas of {gpus} GPUs; the nodes offer room for {room}",
        ),
        "replicas",
    ),
    Code.BUNDLE_TOO_BIG: Template(
        N_("a bundle must fit on one node; the largest node has {gpus} free GPUs")
    ),
    Code.WHY_MODELS_CHANGE: Template(N_("you said models change often")),
    Code.WHY_MODEL_FIXED: Template(N_("the model is fixed")),
    Code.WHY_MODELS_SHARE_POOL: Template(N_("several models share the GPU pool")),
    Code.WHY_ONE_MODEL: Template(N_("one model owns these GPUs")),
    Code.WHY_AUTOSCALING: Template(N_("Serve autoscaling follows the load; keep min_replicas ≥ 1")),
    Code.WHY_TRAFFIC_STEADY: Template(N_("traffic is steady")),
    Code.WHY_SELF_HEALING: Template(N_("an explicit self-healing SLO exists")),
    Code.WHY_NO_SELF_HEALING: Template(N_("no explicit self-healing SLO was given")),
    Code.WHY_RAY_ESTATE: Template(N_("a Ray estate already runs here and can be reused")),
    Code.WHY_NO_RAY_CLUSTER: Template(N_("no Ray cluster runs here today")),
    Code.WHY_RAY_STARTS_WORKERS: Template(
        N_("Ray starts the workers on every node (it does not add bandwidth)")
    ),
    Code.WHY_NO_REPLICA_SPANS: Template(N_("no replica spans nodes")),
    Code.WHY_LAUNCH_BY_HAND: Template(N_("you accept launching each node by hand")),
    Code.WHY_FIXED_FLEET: counted(
        NP_(
            "{nodes} fixed machine serves one fixed model",
            "{nodes} fixed machines serve one fixed model",
        ),
        "nodes",
    ),
    Code.WHY_FLEET_OR_CHANGING: counted(
        NP_("{nodes} machine or changing models", "{nodes} machines or changing models"), "nodes"
    ),
    Code.WHY_FIXED_REPLICAS: Template(N_("fixed replicas cover steady traffic")),
    Code.WHY_TRAFFIC_IS: Template(N_("traffic is {shape}")),
    Code.WHY_GATEWAY: Template(N_("the existing gateway can balance the replicas")),
    Code.WHY_NO_GATEWAY: Template(N_("no gateway was declared (Nginx config is generated)")),
    Code.WHY_DTYPE_FITS_NODE: Template(N_("{dtype} weights fit one node per replica")),
    Code.WHY_MUST_SPAN: Template(N_("the model must span nodes")),
    Code.WHY_NO_RAY_EXPERIENCE: Template(N_("the team has no Ray operations experience")),
    Code.WHY_RAY_EXPERIENCE: Template(N_("the team operates Ray today")),
    Code.SUMMARY: counted(
        NP_(
            "{route}: serve {model} with {dtype} weights as TP{tp}×PP{pp} × {replicas} "
            "replica on {gpu} ({hosts}). It holds {kv_tokens} KV tokens, "
            "{max_concurrency} sequences of {max_model_len} tokens; ≈{throughput_tok_s} output "
            "tok/s at {concurrency} concurrent (TTFT ≈ {ttft_ms} ms, inter-token ≈ {itl_ms} ms). "
            "Executor {backend}, balancer {balancer}.",
            "{route}: serve {model} with {dtype} weights as TP{tp}×PP{pp} × {replicas} "
            "replicas on {gpu} ({hosts}). Each replica holds {kv_tokens} KV tokens, "
            "{max_concurrency} sequences of {max_model_len} tokens; ≈{throughput_tok_s} output "
            "tok/s at {concurrency} concurrent (TTFT ≈ {ttft_ms} ms, inter-token ≈ {itl_ms} ms). "
            "Executor {backend}, balancer {balancer}.",
        ),
        "replicas",
    ),
    Code.SUMMARY_NOTHING_FITS: Template(
        N_(
            "Nothing fits: {model} at max_model_len {max_model_len} does not start on the offered "
            "{gpu} nodes, even quantized to {dtype}. Add GPUs, shorten max_model_len or pick a "
            "smaller model."
        )
    ),
    Code.HOSTS_AND_MORE: Template(N_("{hosts} and {more} more")),
    Code.ROUTE_SINGLE: Template(N_("Single GPU/node")),
    Code.ROUTE_A: Template(N_("Route A")),
    Code.ROUTE_B: Template(N_("Route B")),
    Code.ROUTE_C: Template(N_("Route C")),
    # English an earlier engine saved, shown as it was written.
    Code.RUNNER_UP_NO_NOTE: Template("", translated=False),
    Code.POOL_UNPLACED_ROOM: Template(
        N_(
            "its smallest layout, {layout} on {gpu}, needs {gpus} GPUs; {free} are left after "
            "the models placed before it, and none holds it"
        )
    ),
    Code.POOL_UNPLACED_MEMORY: Template(
        N_("it fits no GPU of the pool; even TP{tp} on {gpu}: {reason}")
    ),
    Code.POOL_NO_LAYOUT: Template(
        N_("no tensor-parallel size of this model divides the GPUs of a node in the pool")
    ),
    Code.POOL_HINT_QUANTIZE: Template(N_("quantize its weights to {dtype}")),
    Code.POOL_HINT_CONTEXT: Template(N_("shorten its context to {max_model_len} tokens")),
    Code.POOL_HINT_ADD_GPUS: counted(
        NP_("add {gpus} {gpu} GPU", "add {gpus} {gpu} GPUs, on one node for each TP group"),
        "gpus",
    ),
    Code.POOL_HINT_YIELD: Template(N_("lower the priority or the load of {models}")),
    Code.POOL_ROUTE_A: Template(
        N_(
            "Route A: {models} models on {gpus} GPUs, a fixed set. One vLLM deployment per "
            "model, each with GPUs of its own, behind one {router} endpoint that routes each "
            "request by its model field. No Ray."
        ),
        rules=(Rule.ROUTE_A,),
    ),
    Code.POOL_ROUTE_C: Template(
        N_(
            "Route C: one Ray Serve LLM application per model ({models}) in one serve config; "
            "Serve's autoscaling can use the pool's {spare} spare GPUs and move GPUs between "
            "models."
        ),
        rules=(Rule.ROUTE_C,),
    ),
    Code.POOL_C_MODELS_CHANGE: Template(
        N_("the models change often: one serve config adds or drops a model's application")
    ),
    Code.POOL_C_MOVE_GPUS: counted(
        NP_(
            "{count} model's load varies ({models}): GPUs should move between models",
            "{count} models' loads vary ({models}): GPUs should move between models",
        ),
        "count",
    ),
    Code.POOL_C_SELF_HEALING: Template(
        N_("the pool must heal itself under its SLO: Serve restarts failed replicas")
    ),
    Code.POOL_C_RAY_IN_USE: Template(N_("the team already runs Ray")),
    Code.LEGACY: Template("{text}", translated=False),
    Code.LEGACY_PITFALL: Template("{text}", action="{action}", translated=False),
}

# The words the engine uses as values, with a context that keeps them apart from the same
# English elsewhere in the interface.
TERM_CONTEXT = "engine value"
TERMS: dict[Term, str] = {
    Term.ETHERNET: NC_("engine value", "ethernet"),
    Term.ROCE: NC_("engine value", "RoCE"),
    Term.INFINIBAND: NC_("engine value", "InfiniBand"),
    Term.NVLINK: NC_("engine value", "NVLink"),
    Term.PCIE: NC_("engine value", "PCIe"),
    Term.NONE: NC_("engine value", "none"),
    Term.STEADY: NC_("engine value", "steady"),
    Term.DIURNAL: NC_("engine value", "day/night"),
    Term.BURSTY: NC_("engine value", "bursty"),
    Term.DEDICATED: NC_("engine value", "dedicated"),
    Term.SHARED: NC_("engine value", "shared"),
    Term.TTFT: NC_("engine value", "TTFT"),
    Term.ITL: NC_("engine value", "inter-token latency"),
}
