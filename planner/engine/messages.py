"""What the engine says: codes with typed parameters, never English sentences.

A message is a `Code` and its parameters. The English template of each code, its translation
and the DOMAIN.md rules it cites live once, in planner/presentation/templates.py; this module
only says which parameters each code takes (`SIGNATURES`), so that the engine cannot emit a
message a template cannot render, and an earlier engine's saved message can be told apart.

Parameter values are typed: numbers (formatted for the reader), plain strings shown verbatim
(host names, GPU slugs, dtypes, layouts), `Term`s (words the reader's language translates),
nested `Message`s (a phrase such as the why of a signal) and tuples of codes (the signals that
hit, shown by their names).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Union


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
    REJECT_MEMORY = "reject_memory"
    REJECT_KV = "reject_kv"
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


# The parameters each code takes (a pitfall's include those of its action).
SIGNATURES: dict[Code, tuple[str, ...]] = {
    Code.NODE_SELECTION: (
        "nodes_used",
        "nodes_offered",
        "gpu",
        "link_gbps",
        "link_kind",
        "concurrency",
    ),
    Code.FITS_ONE_GPU: ("weights_gib", "kv_tokens"),
    Code.FITS_ONE_NODE: ("tp", "weights_gib", "max_concurrency", "max_model_len"),
    Code.REPLICAS_BEHIND_BALANCER: (
        "replicas",
        "tp",
        "pp",
        "balancer",
        "balancer_config",
        "capacity_ratio",
        "concurrency",
        "workload_ratio",
    ),
    Code.LAYOUT_CHOICE: (
        "tp",
        "pp",
        "replicas",
        "throughput_tok_s",
        "concurrency",
        "itl_ms",
        "runner_up",
        "runner_up_score",
        "runner_up_tok_s",
        "runner_up_note",
    ),
    Code.CROSS_NODE_WORSE: ("layout", "comm_ms", "link_gbps", "compute_ms", "slowdown", "best"),
    Code.MUST_SPAN_NODES: (
        "single_node_concurrency",
        "max_model_len",
        "concurrency",
        "nodes",
        "gpus",
        "span_concurrency",
    ),
    Code.PP_OVER_CROSS_TP: ("tp", "pp", "cross_tp", "pp_comm_ms", "tp_comm_ms"),
    Code.NETWORK_CHECK: ("link_gbps", "link_kind", "effective_gbs", "verdict"),
    Code.QUANTIZE_FIRST: (
        "requested_dtype",
        "requested_weights_gib",
        "dtype",
        "weights_gib",
        "kv_tokens",
    ),
    Code.VLLM_VERSION_ASSUMED: ("vllm_version",),
    Code.MEMORY_RULES: (
        "vllm_version",
        "engine",
        "cuda_graph_gib",
        "non_torch_gib",
        "profile_tokens",
    ),
    Code.CUDA_GRAPHS_SKIPPED_PLATFORM: ("vllm_version", "vendor"),
    Code.CUDA_GRAPHS_RUNNER_V2: ("vllm_version",),
    Code.QUANTIZE_FEWER_NODES: (
        "dtype",
        "nodes",
        "requested_dtype",
        "requested_nodes",
        "link_gbps",
        "weights_gib",
        "gpus",
        "requested_weights_gib",
        "requested_gpus",
        "kv_tokens",
    ),
    Code.SMALL_MODEL_REPLICAS: (
        "replicas",
        "tp",
        "larger_tp",
        "larger_replicas",
        "share_pct",
        "throughput_tok_s",
        "larger_tok_s",
        "concurrency",
    ),
    Code.LARGER_TP_WINS: (
        "tp",
        "share_pct",
        "larger_tp",
        "throughput_tok_s",
        "larger_tok_s",
        "concurrency",
    ),
    Code.QUANTIZED_BARELY: (
        "dtype",
        "weights_gib",
        "kv_tokens",
        "max_concurrency",
        "max_model_len",
    ),
    Code.RAY_ROUTE_C: ("hits", "signals", "gpus_per_replica"),
    Code.RAY_NOT_NEEDED: ("hits_for", "hits_against"),
    Code.RAY_CONSIDER: ("hits", "signals", "hits_against"),
    Code.EXECUTOR_BACKEND: ("backend", "why"),
    Code.V1_CHUNKED_PREFILL: (
        "max_num_batched_tokens",
        "max_model_len",
        "layout",
        "max_concurrency",
    ),
    Code.PINNED_LAYOUT: (
        "tp",
        "pp",
        "replicas",
        "verdict",
        "throughput_tok_s",
        "best_tok_s",
        "score",
        "best_score",
    ),
    Code.SGLANG_PREFIX: (),
    Code.NOTHING_FITS: ("max_model_len",),
    Code.LOAD_NOT_SERVED: ("max_concurrency_total", "max_model_len", "concurrency"),
    Code.SLO_MISSED: ("metric", "value_ms", "slo_ms"),
    Code.SIG_MODELS_CHANGE_OFTEN: ("why",),
    Code.SIG_MULTI_MODEL_POOL: ("why",),
    Code.SIG_TRAFFIC_SWINGS: ("shape", "why"),
    Code.SIG_SELF_HEALING_SLO: ("why",),
    Code.SIG_RAY_IN_USE: ("why",),
    Code.SIG_CROSS_NODE_NO_NCCL: ("why",),
    Code.SIG_FIXED_SMALL_FLEET: ("why",),
    Code.SIG_STEADY_TRAFFIC: ("why",),
    Code.SIG_GATEWAY_AVAILABLE: ("why",),
    Code.SIG_QUANTIZATION_FITS: ("why",),
    Code.SIG_NO_RAY_EXPERIENCE: ("why",),
    Code.PIT_NCCL_SOCKET_IFNAME: ("nic",),
    Code.PIT_NCCL_ROCE_GID: ("nic",),
    Code.PIT_NCCL_TCP: (),
    Code.PIT_NCCL_DEBUG: (),
    Code.PIT_RAY_VERSION: ("image",),
    Code.PIT_RAY_NUM_GPUS: ("gpus_per_replica",),
    Code.PIT_RAY_START_NUM_GPUS: ("gpus_per_node",),
    Code.PIT_RAY_HEAD_LIGHT: ("head",),
    Code.PIT_RAY_LOGS: (),
    Code.PIT_GPU_UTIL_SHARED: ("pool_kind",),
    Code.PIT_DOCKER_IPC: (),
    Code.PIT_WEIGHTS_EVERY_NODE: (),
    Code.PIT_PIN_VERSIONS: ("image",),
    Code.PIT_LOW_KV_HEADROOM: ("max_concurrency", "max_model_len", "per_replica"),
    Code.PIT_SLOW_LINK_CROSS_TP: ("link_gbps", "comm_ms"),
    Code.PIT_LINK_BELOW_10GBE: ("link_gbps",),
    Code.PIT_NO_DATA_NIC: ("hostname",),
    Code.PIT_COLD_START: ("weights_gib", "cold_start_s"),
    Code.PIT_RAY_MAX_RESTARTS: (),
    Code.PIT_PREFIX_CACHING: (),
    Code.PIT_SIMULATION_CAPPED: ("simulated", "requested"),
    Code.PIT_NEEDS_QUANTIZED_CHECKPOINT: ("dtype",),
    Code.PIT_NNODES_WITH_RAY: (),
    Code.WHY_RAY_SERVE: (),
    Code.WHY_SHARED_POOL: (),
    Code.WHY_RAY_MANAGES: (),
    Code.WHY_MP_ACROSS_NODES: (),
    Code.WHY_MP_INSIDE_NODE: (),
    Code.PINNED_NO_FIT: ("reason",),
    Code.PINNED_NO_FIT_AT_DTYPE: ("dtype", "reason"),
    Code.PINNED_SHORT_OF_LOAD: (),
    Code.PINNED_FITS: (),
    Code.PINNED_NO_LAYOUT: (),
    Code.PINNED_LAYOUT_NO_SPEED: ("tp", "pp", "replicas", "verdict"),
    Code.PIN_NO_ROOM: ("gpus", "nodes", "with_room", "most_free"),
    Code.PIN_FREE_GPUS: ("gpus", "hosts"),
    Code.PINNED_NOT_PLACEABLE: ("reason", "hint"),
    Code.PIN_NEEDS_NODES: ("gpus", "nodes"),
    Code.STEP_BACKEND_UNCOVERED: ("reason",),
    Code.STEP_BACKEND_FALLBACK: ("steps", "reason"),
    Code.RUNNER_UP_SHORT_OF_LOAD: ("concurrency", "max_model_len"),
    Code.RUNNER_UP_SPANS_NODES: (),
    Code.RUNNER_UP_HBM_BOUND: (),
    Code.RUNNER_UP_NO_NOTE: (),
    Code.LINK_TOO_SLOW: (),
    Code.LINK_WITH_CARE: (),
    Code.LINK_COMFORTABLE: (),
    Code.BALANCER_NGINX: (),
    Code.BALANCER_SERVE: (),
    Code.REJECT_MEMORY: (),
    Code.REJECT_KV: ("kv_tokens", "max_model_len"),
    Code.REJECT_ROOM: ("replicas", "gpus", "room"),
    Code.BUNDLE_TOO_BIG: ("gpus",),
    Code.WHY_MODELS_CHANGE: (),
    Code.WHY_MODEL_FIXED: (),
    Code.WHY_MODELS_SHARE_POOL: (),
    Code.WHY_ONE_MODEL: (),
    Code.WHY_AUTOSCALING: (),
    Code.WHY_TRAFFIC_STEADY: (),
    Code.WHY_SELF_HEALING: (),
    Code.WHY_NO_SELF_HEALING: (),
    Code.WHY_RAY_ESTATE: (),
    Code.WHY_NO_RAY_CLUSTER: (),
    Code.WHY_RAY_STARTS_WORKERS: (),
    Code.WHY_NO_REPLICA_SPANS: (),
    Code.WHY_LAUNCH_BY_HAND: (),
    Code.WHY_FIXED_FLEET: ("nodes",),
    Code.WHY_FLEET_OR_CHANGING: ("nodes",),
    Code.WHY_FIXED_REPLICAS: (),
    Code.WHY_TRAFFIC_IS: ("shape",),
    Code.WHY_GATEWAY: (),
    Code.WHY_NO_GATEWAY: (),
    Code.WHY_DTYPE_FITS_NODE: ("dtype",),
    Code.WHY_MUST_SPAN: (),
    Code.WHY_NO_RAY_EXPERIENCE: (),
    Code.WHY_RAY_EXPERIENCE: (),
    Code.SUMMARY: (
        "route",
        "model",
        "dtype",
        "tp",
        "pp",
        "replicas",
        "gpu",
        "hosts",
        "kv_tokens",
        "max_concurrency",
        "max_model_len",
        "throughput_tok_s",
        "concurrency",
        "ttft_ms",
        "itl_ms",
        "backend",
        "balancer",
    ),
    Code.SUMMARY_NOTHING_FITS: ("model", "max_model_len", "gpu", "dtype"),
    Code.HOSTS_AND_MORE: ("hosts", "more"),
    Code.ROUTE_SINGLE: (),
    Code.ROUTE_A: (),
    Code.ROUTE_B: (),
    Code.ROUTE_C: (),
    Code.POOL_UNPLACED_ROOM: ("layout", "gpu", "gpus", "free"),
    Code.POOL_UNPLACED_MEMORY: ("gpu", "tp", "reason"),
    Code.POOL_NO_LAYOUT: (),
    Code.POOL_HINT_QUANTIZE: ("dtype",),
    Code.POOL_HINT_CONTEXT: ("max_model_len",),
    Code.POOL_HINT_ADD_GPUS: ("gpus", "gpu"),
    Code.POOL_HINT_YIELD: ("models",),
    Code.POOL_ROUTE_A: ("models", "gpus", "router"),
    Code.POOL_ROUTE_C: ("models", "spare"),
    Code.POOL_C_MODELS_CHANGE: (),
    Code.POOL_C_MOVE_GPUS: ("count", "models"),
    Code.POOL_C_SELF_HEALING: (),
    Code.POOL_C_RAY_IN_USE: (),
    Code.LEGACY: ("text", "rule"),
    Code.LEGACY_PITFALL: ("text", "action", "rule"),
}

Param = Union[int, float, str, Term, "Message", tuple[Code, ...]]


class MessageError(ValueError):
    """A message whose parameters are not those of its code."""


@dataclass(frozen=True, slots=True)
class Message:
    """One thing the engine says: a code and the values of its parameters."""

    code: Code
    params: Mapping[str, Param] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the stored form: {"code": ..., "params": {...}} (nested values tagged)."""
        return {"code": self.code.value, "params": {k: _encode(v) for k, v in self.params.items()}}

    @classmethod
    def from_json(cls, data: Any) -> Message:
        """Return the message a `to_json` dict describes (a Message is returned as it is)."""
        if isinstance(data, Message):
            return data
        if not isinstance(data, Mapping) or "code" not in data:
            raise MessageError(f"a message is an object with a code, not {data!r:.60}")
        try:
            code = Code(data["code"])
        except ValueError:
            raise MessageError(f"unknown message code {data['code']!r}") from None
        params = data.get("params") or {}
        if not isinstance(params, Mapping):
            raise MessageError(f"{code}: params must be an object")
        return message(code, **{str(k): _decode(v) for k, v in params.items()})

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        # PlanResult.from_dict validates with pydantic: a message reads through from_json.
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(cls.from_json)


def message(code: Code | str, **params: Param) -> Message:
    """Return the message `code` with `params`; refuse parameters its code does not take."""
    code = Code(code)
    want = set(SIGNATURES[code])
    if set(params) != want:
        missing, extra = sorted(want - set(params)), sorted(set(params) - want)
        raise MessageError(f"{code}: missing parameters {missing}, unexpected {extra}")
    return Message(code, params)


def legacy(text: str, rule: str = "") -> Message:
    """Return English an earlier engine wrote, kept as it was, with the rule it cited."""
    return Message(Code.LEGACY, {"text": text, "rule": rule})


def _encode(value: Param) -> Any:
    if isinstance(value, Message):
        return value.to_json()
    if isinstance(value, Term):
        return {"term": value.value}
    if isinstance(value, tuple):
        return {"codes": [c.value for c in value]}
    return value


def _decode(value: Any) -> Param:
    if isinstance(value, Mapping):
        if "term" in value:
            return Term(value["term"])
        if "codes" in value:
            return tuple(Code(c) for c in value["codes"])
        return Message.from_json(value)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise MessageError(f"a message parameter cannot be {value!r:.60}")
    return value
