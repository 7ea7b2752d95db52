"""The engine's message codes and the words it leaves to the reader's language (Term), marked for
translation.
"""

from __future__ import annotations

from enum import StrEnum


def N_(template: str) -> str:  # noqa: N802 - the gettext convention xgettext is told about
    """Mark an English template for extraction (`makemessages` runs xgettext --keyword=N_)."""
    return template


def NP_(singular: str, plural: str) -> tuple[str, str]:  # noqa: N802
    """Mark a template with its plural form (xgettext --keyword=NP_:1,2): the catalog gets one
    entry with both, and the renderer picks the form by the template's count parameter."""
    return singular, plural


def NC_(context: str, word: str) -> str:  # noqa: N802
    """Mark a word with its translation context (xgettext --keyword=NC_:1c,2)."""
    del context
    return word


class Code(StrEnum):
    # reasons of a recommendation
    NODE_SELECTION = "node_selection"
    FITS_ONE_GPU = "fits_one_gpu"
    FITS_ONE_NODE = "fits_one_node"
    REPLICAS_BEHIND_BALANCER = "replicas_behind_balancer"
    LAYOUT_CHOICE = "layout_choice"
    CROSS_NODE_WORSE = "cross_node_worse"
    MUST_SPAN_NODES = "must_span_nodes"
    PP_OVER_CROSS_TP = "pp_over_cross_tp"
    NETWORK_CHECK = "network_check"
    QUANTIZE_FIRST = "quantize_first"
    MEMORY_RULES = "memory_rules"
    VLLM_VERSION_ASSUMED = "vllm_version_assumed"
    V0_ENGINE_HOST = "v0_engine_host"
    V0_PROMPTS_FIRST = "v0_prompts_first"
    V0_ON_PRE_AMPERE = "v0_on_pre_ampere"
    FP16_ON_PRE_AMPERE = "fp16_on_pre_ampere"
    CUDA_GRAPHS_SKIPPED_PLATFORM = "cuda_graphs_skipped_platform"
    CUDA_GRAPHS_RUNNER_V2 = "cuda_graphs_runner_v2"
    QUANTIZE_FEWER_NODES = "quantize_fewer_nodes"
    SMALL_MODEL_REPLICAS = "small_model_replicas"
    LARGER_TP_WINS = "larger_tp_wins"
    QUANTIZED_BARELY = "quantized_barely"
    RAY_ROUTE_C = "ray_route_c"
    RAY_NOT_NEEDED = "ray_not_needed"
    RAY_CONSIDER = "ray_consider"
    EXECUTOR_BACKEND = "executor_backend"
    V1_CHUNKED_PREFILL = "v1_chunked_prefill"
    PINNED_LAYOUT = "pinned_layout"
    PINNED_LAYOUT_NO_SPEED = "pinned_layout_no_speed"
    SGLANG_PREFIX = "sglang_prefix"
    NOTHING_FITS = "nothing_fits"
    NOTHING_FITS_AS_SET = "nothing_fits_as_set"
    LOAD_NOT_SERVED = "load_not_served"
    SLO_MISSED = "slo_missed"
    # signals for and against Ray
    SIG_MODELS_CHANGE_OFTEN = "sig_models_change_often"
    SIG_MULTI_MODEL_POOL = "sig_multi_model_pool"
    SIG_TRAFFIC_SWINGS = "sig_traffic_swings"
    SIG_SELF_HEALING_SLO = "sig_self_healing_slo"
    SIG_RAY_IN_USE = "sig_ray_in_use"
    SIG_CROSS_NODE_NO_NCCL = "sig_cross_node_no_nccl"
    SIG_FIXED_SMALL_FLEET = "sig_fixed_small_fleet"
    SIG_STEADY_TRAFFIC = "sig_steady_traffic"
    SIG_GATEWAY_AVAILABLE = "sig_gateway_available"
    SIG_QUANTIZATION_FITS = "sig_quantization_fits"
    SIG_NO_RAY_EXPERIENCE = "sig_no_ray_experience"
    # pitfalls
    PIT_NCCL_SOCKET_IFNAME = "pit_nccl_socket_ifname"
    PIT_NCCL_ROCE_GID = "pit_nccl_roce_gid"
    PIT_NCCL_TCP = "pit_nccl_tcp"
    PIT_NCCL_DEBUG = "pit_nccl_debug"
    PIT_RAY_VERSION = "pit_ray_version"
    PIT_RAY_NUM_GPUS = "pit_ray_num_gpus"
    PIT_RAY_START_NUM_GPUS = "pit_ray_start_num_gpus"
    PIT_RAY_HEAD_LIGHT = "pit_ray_head_light"
    PIT_RAY_LOGS = "pit_ray_logs"
    PIT_GPU_UTIL_SHARED = "pit_gpu_util_shared"
    PIT_DOCKER_IPC = "pit_docker_ipc"
    PIT_WEIGHTS_EVERY_NODE = "pit_weights_every_node"
    PIT_PIN_VERSIONS = "pit_pin_versions"
    PIT_LOW_KV_HEADROOM = "pit_low_kv_headroom"
    PIT_SLOW_LINK_CROSS_TP = "pit_slow_link_cross_tp"
    PIT_LINK_BELOW_10GBE = "pit_link_below_10gbe"
    PIT_NO_DATA_NIC = "pit_no_data_nic"
    PIT_COLD_START = "pit_cold_start"
    PIT_RAY_MAX_RESTARTS = "pit_ray_max_restarts"
    PIT_PREFIX_CACHING = "pit_prefix_caching"
    PIT_NEEDS_QUANTIZED_CHECKPOINT = "pit_needs_quantized_checkpoint"
    PIT_NNODES_WITH_RAY = "pit_nnodes_with_ray"
    PIT_SIMULATION_CAPPED = "pit_simulation_capped"
    PIT_PCIE_TP_RING = "pit_pcie_tp_ring"
    # why this executor backend
    WHY_RAY_SERVE = "why_ray_serve"
    WHY_SHARED_POOL = "why_shared_pool"
    WHY_RAY_MANAGES = "why_ray_manages"
    WHY_MP_ACROSS_NODES = "why_mp_across_nodes"
    WHY_MP_INSIDE_NODE = "why_mp_inside_node"
    # what became of a pinned layout
    PINNED_NO_FIT = "pinned_no_fit"
    PINNED_NO_FIT_AT_DTYPE = "pinned_no_fit_at_dtype"
    PINNED_SHORT_OF_LOAD = "pinned_short_of_load"
    PINNED_FITS = "pinned_fits"
    PINNED_NO_LAYOUT = "pinned_no_layout"
    # why a pinned layout cannot be placed now, and what would place it
    PIN_NO_ROOM = "pin_no_room"
    PINNED_NOT_PLACEABLE = "pinned_not_placeable"
    PIN_FREE_GPUS = "pin_free_gpus"
    PIN_NEEDS_NODES = "pin_needs_nodes"
    # what timed the serving model's steps, when measured kernel tables were asked for
    STEP_BACKEND_UNCOVERED = "step_backend_uncovered"
    STEP_BACKEND_FALLBACK = "step_backend_fallback"
    # why the runner-up layout is ranked lower
    RUNNER_UP_SHORT_OF_LOAD = "runner_up_short_of_load"
    RUNNER_UP_SPANS_NODES = "runner_up_spans_nodes"
    RUNNER_UP_HBM_BOUND = "runner_up_hbm_bound"
    RUNNER_UP_NO_NOTE = "runner_up_no_note"
    # the cross-node link, judged
    LINK_TOO_SLOW = "link_too_slow"
    LINK_WITH_CARE = "link_with_care"
    LINK_COMFORTABLE = "link_comfortable"
    # how the balancer is set up
    BALANCER_NGINX = "balancer_nginx"
    BALANCER_SERVE = "balancer_serve"
    # why a layout or a placement bundle is rejected
    REJECT_MEMORY = "reject_memory"  # plans saved before the figures below
    REJECT_MEMORY_OVER = "reject_memory_over"
    REJECT_MEMORY_SEQS = "reject_memory_seqs"
    REJECT_MEMORY_UTILIZATION = "reject_memory_utilization"
    REJECT_KV = "reject_kv"
    REJECT_KV_SEQS = "reject_kv_seqs"
    REJECT_KV_UTILIZATION = "reject_kv_utilization"
    REJECT_ROOM = "reject_room"
    BUNDLE_TOO_BIG = "bundle_too_big"
    # the why of each signal
    WHY_MODELS_CHANGE = "why_models_change"
    WHY_MODEL_FIXED = "why_model_fixed"
    WHY_MODELS_SHARE_POOL = "why_models_share_pool"
    WHY_ONE_MODEL = "why_one_model"
    WHY_AUTOSCALING = "why_autoscaling"
    WHY_TRAFFIC_STEADY = "why_traffic_steady"
    WHY_SELF_HEALING = "why_self_healing"
    WHY_NO_SELF_HEALING = "why_no_self_healing"
    WHY_RAY_ESTATE = "why_ray_estate"
    WHY_NO_RAY_CLUSTER = "why_no_ray_cluster"
    WHY_RAY_STARTS_WORKERS = "why_ray_starts_workers"
    WHY_NO_REPLICA_SPANS = "why_no_replica_spans"
    WHY_LAUNCH_BY_HAND = "why_launch_by_hand"
    WHY_FIXED_FLEET = "why_fixed_fleet"
    WHY_FLEET_OR_CHANGING = "why_fleet_or_changing"
    WHY_FIXED_REPLICAS = "why_fixed_replicas"
    WHY_TRAFFIC_IS = "why_traffic_is"
    WHY_GATEWAY = "why_gateway"
    WHY_NO_GATEWAY = "why_no_gateway"
    WHY_DTYPE_FITS_NODE = "why_dtype_fits_node"
    WHY_MUST_SPAN = "why_must_span"
    WHY_NO_RAY_EXPERIENCE = "why_no_ray_experience"
    WHY_RAY_EXPERIENCE = "why_ray_experience"
    # the recommendation in one sentence
    SUMMARY = "summary"
    SUMMARY_NOTHING_FITS = "summary_nothing_fits"
    SUMMARY_NOTHING_FITS_AS_SET = "summary_nothing_fits_as_set"
    HOSTS_AND_MORE = "hosts_and_more"
    ROUTE_SINGLE = "route_single"
    ROUTE_A = "route_a"
    ROUTE_B = "route_b"
    ROUTE_C = "route_c"
    # English saved by an engine before messages were codes, shown as it was written
    # pool plans (several models on one pool)
    POOL_UNPLACED_ROOM = "pool_unplaced_room"
    POOL_UNPLACED_MEMORY = "pool_unplaced_memory"
    POOL_NO_LAYOUT = "pool_no_layout"
    POOL_HINT_QUANTIZE = "pool_hint_quantize"
    POOL_HINT_CONTEXT = "pool_hint_context"
    POOL_HINT_ADD_GPUS = "pool_hint_add_gpus"
    POOL_HINT_YIELD = "pool_hint_yield"
    POOL_HINT_SHARE = "pool_hint_share"
    POOL_ROUTE_A = "pool_route_a"
    POOL_ROUTE_C = "pool_route_c"
    POOL_C_MODELS_CHANGE = "pool_c_models_change"
    POOL_C_MOVE_GPUS = "pool_c_move_gpus"
    POOL_C_SELF_HEALING = "pool_c_self_healing"
    POOL_C_RAY_IN_USE = "pool_c_ray_in_use"
    LEGACY = "legacy"
    LEGACY_PITFALL = "legacy_pitfall"


class Term(StrEnum):
    """A word the engine uses as a value; the reader's language translates it."""

    ETHERNET = "ethernet"
    ROCE = "roce"
    INFINIBAND = "infiniband"
    NVLINK = "nvlink"
    PCIE = "pcie"
    NONE = "none"
    STEADY = "steady"
    DIURNAL = "diurnal"
    BURSTY = "bursty"
    DEDICATED = "dedicated"
    SHARED = "shared"
    TTFT = "ttft"
    ITL = "itl"
