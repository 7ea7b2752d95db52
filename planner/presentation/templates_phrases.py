"""The English templates of phrases inside other messages (the why of a signal, a runner-up's
note, a pool's hints), and of text an earlier engine saved, shown as written."""

from __future__ import annotations

from planner.engine.messages import N_, NP_, Code
from planner.presentation.template_types import Rule, Template, counted

PHRASE_TEMPLATES: dict[Code, Template] = {
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
    Code.REJECT_MEMORY_OVER: Template(
        N_(
            "weights ({weights_gib} GiB) and start-up overheads ({overhead_gib} GiB) leave no "
            "KV cache in the {requested_gib} GiB requested"
        )
    ),
    Code.REJECT_MEMORY_SEQS: Template(
        N_(
            "weights ({weights_gib} GiB) and start-up overheads ({overhead_gib} GiB) leave no "
            "KV cache in the {requested_gib} GiB requested; --max-num-seqs {max_num_seqs} "
            "would start it (the start-up profile samples every sequence's logits)"
        )
    ),
    Code.REJECT_MEMORY_UTILIZATION: Template(
        N_(
            "weights ({weights_gib} GiB) and start-up overheads ({overhead_gib} GiB) leave no "
            "KV cache in the {requested_gib} GiB requested; gpu_memory_utilization "
            "{utilization} would start it"
        )
    ),
    Code.REJECT_KV: Template(
        N_("KV cache holds {kv_tokens} tokens < max_model_len {max_model_len}")
    ),
    Code.REJECT_KV_SEQS: Template(
        N_(
            "KV cache holds {kv_tokens} tokens < max_model_len {max_model_len}; "
            "--max-num-seqs {max_num_seqs} would hold one request"
        )
    ),
    Code.REJECT_KV_UTILIZATION: Template(
        N_(
            "KV cache holds {kv_tokens} tokens < max_model_len {max_model_len}; "
            "gpu_memory_utilization {utilization} would hold one request"
        )
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
    Code.SUMMARY_NOTHING_FITS_AS_SET: Template(
        N_(
            "Nothing fits as set: {model} at max_model_len {max_model_len} does not start on the "
            "offered {gpu} nodes with {dtype} weights: {reason}."
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
    Code.POOL_HINT_SHARE: Template(
        N_("let small models share a GPU: it fits in half of one {gpu}, beside another model")
    ),
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
