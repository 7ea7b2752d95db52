"""The English templates of the Ray signals and of the pitfalls, each pitfall with its action."""

from __future__ import annotations

from planner.engine.messages import N_, Code
from planner.presentation.template_types import Article, Rule, Template

SIGNAL_AND_PITFALL_TEMPLATES: dict[Code, Template] = {
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
    Code.PIT_PCIE_TP_RING: Template(
        N_(
            "TP{tp} rings over PCIe: its all-reduce is priced at {bandwidth_gbs} GB/s, and "
            "published PCIe machines measure from 1.5 to 35 GB/s for such rings."
        ),
        action=N_(
            "Run nccl-tests all_reduce_perf -g {tp} on the node and enter its busbw at large "
            "sizes as the measured all-reduce bandwidth inside a machine (Machines step)."
        ),
        rules=(Rule.NUMBERS,),
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
}
