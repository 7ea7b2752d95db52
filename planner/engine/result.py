"""The engine's output contract: frozen dataclasses with StrEnums, versioned, JSON round-trip.

`PlanResult.to_dict()` is what a saved plan stores; `PlanResult.from_dict()` reads back what any
engine version stored (see `_upgrade`). Everything outside the engine reads results through this
type (Django code through `planner.selectors`), never through the raw dict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from enum import StrEnum
from functools import cache, cached_property
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from planner.engine.assumptions import Assumptions
from planner.engine.legacy_messages import upgrade_messages
from planner.engine.messages import Code, Message, legacy
from planner.engine.serving import Prediction, ServingContext

# Bump when the stored shape changes, and add the step from the previous version to _UPGRADES.
SCHEMA_VERSION = 7


class Route(StrEnum):
    SINGLE = "single"  # one GPU or one node, one replica
    A = "A"  # replicas inside nodes behind a balancer
    B = "B"  # one instance across nodes
    C = "C"  # Ray Serve pool
    NONE = "none"  # nothing fits


class Backend(StrEnum):
    MP = "mp"
    RAY = "ray"


class Balancer(StrEnum):
    NONE = "none"
    NGINX = "nginx"
    VLLM_DP = "vllm-dp"
    RAY_SERVE = "ray-serve"


class CandidateKind(StrEnum):
    SINGLE_GPU = "single-gpu"
    INTRA_NODE = "intra-node"
    CROSS_NODE_TP = "cross-node-tp"
    CROSS_NODE_PP = "cross-node-pp"


class PlacementStrategy(StrEnum):
    """Ray placement-group strategies (ray.util.placement_group)."""

    PACK = "PACK"
    SPREAD = "SPREAD"
    STRICT_PACK = "STRICT_PACK"
    STRICT_SPREAD = "STRICT_SPREAD"


class Severity(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Return 0 for the most severe."""
        return list(Severity).index(self)


class Direction(StrEnum):
    FOR_RAY = "for_ray"
    AGAINST_RAY = "against_ray"


class Strength(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    MEDIUM_HIGH = "medium-high"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """Return 0 for the weakest."""
        return list(Strength).index(self)


def layout_label(tp: int, pp: int, replicas: int) -> str:
    """Return the one spelling of a layout, e.g. 'TP4×PP2×1'."""
    return f"TP{tp}×PP{pp}×{replicas}"


def _coerce_enums(obj: Any) -> None:
    """Turn the str values the engine passes into the StrEnums the fields declare."""
    for name, enum in _enum_fields(type(obj)).items():
        value = getattr(obj, name)
        if not isinstance(value, enum):
            object.__setattr__(obj, name, enum(value))


@cache
def _enum_fields(cls: type) -> dict[str, type[StrEnum]]:
    hints = get_type_hints(cls)
    return {
        f.name: hints[f.name]
        for f in fields(cls)
        if isinstance(hints[f.name], type) and issubclass(hints[f.name], StrEnum)
    }


class _TypedEnums:
    """Base of the dataclasses with StrEnum fields: engine code may pass plain strings."""

    __slots__ = ()

    def __post_init__(self) -> None:
        _coerce_enums(self)


def plain(value: Any) -> Any:
    """Return a result part as JSON-able values (messages as codes, floats to 3 decimals)."""
    if isinstance(value, Message):
        return value.to_json()
    if isinstance(value, StrEnum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: plain(getattr(value, f.name))
            for f in fields(value)
            if not f.metadata.get("internal")
        }
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 3)
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryBreakdown:
    """Per-GPU memory of the stage that limits the KV cache, in GiB."""

    visible_gib: float
    requested_gib: float
    weights_gib: float
    activation_peak_gib: float
    non_torch_gib: float
    cuda_graph_gib: float
    kv_budget_gib: float
    free_gib: float
    kv_bytes_per_token: float
    stage_weights_gib: tuple[float, ...]
    stage_layers: tuple[int, ...]
    # vLLM's KV groups on this GPU (1 unless layers mix full, windowed or cross attention) and
    # the blocks one max_model_len request holds at most.
    kv_groups: int = 1
    blocks_per_request: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate(_TypedEnums):
    id: str
    tp: int
    pp: int
    replicas: int
    nodes_per_replica: int
    gpus_per_replica: int
    kind: CandidateKind
    weight_dtype: str
    gpu: str
    hosts: tuple[tuple[str, ...], ...]
    memory: MemoryBreakdown
    kv_tokens_per_replica: int
    max_concurrency_per_replica: float
    max_concurrency_total: float
    tp_link: str
    pp_link: str
    # Speed figures: None when the layout's memory does not fit (it never starts, and
    # `rejected_reason` says why); a layout that fits but cannot be placed keeps them.
    comm_per_decode_step_ms: float | None
    pp_comm_per_decode_step_ms: float | None
    comm_per_prefill_ms: float | None
    decode_step_ms: float | None
    decode_compute_ms: float | None
    itl_ms: float | None
    ttft_ms: float | None
    batch_per_replica: float | None
    output_throughput_tok_s: float | None
    total_throughput_tok_s: float | None
    capacity_output_tok_s: float | None
    fits: bool
    serves_load: bool
    rejected_reason: Message | None  # None when the layout fits
    score: float
    pinned: bool = False
    # False for a pinned layout that has no room on the nodes' free GPUs (it is evaluated as
    # if room were made); why (placement_reason) and what would place it (placement_hint).
    placeable: bool = True
    placement_reason: Message | None = None
    placement_hint: Message | None = None
    # The serving model's prediction under the workload (simulated for the leading candidates
    # and the pinned layout; None for the others, which are ranked on the steady state).
    serving: Prediction | None = None
    # What the prediction was computed from; kept in memory only (never serialised).
    serving_context: ServingContext | None = field(
        default=None, compare=False, repr=False, metadata={"internal": True}
    )

    @property
    def label(self) -> str:
        """Return e.g. 'TP4×PP2×1'."""
        return layout_label(self.tp, self.pp, self.replicas)

    @property
    def spans_nodes(self) -> bool:
        return self.nodes_per_replica > 1

    @property
    def host_names(self) -> tuple[str, ...]:
        """Return every host of every replica, in order, once."""
        return tuple(dict.fromkeys(h for hosts in self.hosts for h in hosts))

    def gpu_blocks(self, block_size_tokens: int) -> int:
        """Return vLLM's num_gpu_blocks on one GPU of the limiting stage.

        With hybrid attention every KV group takes its own blocks from one pool, so vLLM counts
        groups × the blocks a logged "KV token" figure covers (Gemma 3: 7 groups).
        """
        return self.kv_tokens_per_replica // block_size_tokens * max(1, self.memory.kv_groups)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryRules:
    """The vLLM version whose memory-profiling rules the plan followed (engine/profiling.py)."""

    vllm_version: str
    engine: str  # V0 | V1
    cuda_graphs_subtracted: bool
    full_length_prefill: bool
    description: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation(_TypedEnums):
    route: Route
    tp: int
    pp: int
    replicas: int
    nodes_per_replica: int
    weight_dtype: str
    executor_backend: Backend
    balancer: Balancer
    candidate_id: str
    summary: Message
    reasons: tuple[Message, ...]

    @property
    def label(self) -> str:
        """Return e.g. 'TP4×PP2×1'."""
        return layout_label(self.tp, self.pp, self.replicas)

    @property
    def fits(self) -> bool:
        return self.route != Route.NONE

    @property
    def uses_ray(self) -> bool:
        return self.executor_backend == Backend.RAY or self.route == Route.C


@dataclass(frozen=True, slots=True, kw_only=True)
class Signal(_TypedEnums):
    message: Message  # the signal's code, with the why of its verdict
    direction: Direction
    strength: Strength
    hit: bool

    @property
    def code(self) -> Code:
        return self.message.code


@dataclass(frozen=True, slots=True, kw_only=True)
class Pitfall(_TypedEnums):
    message: Message  # the pitfall's code; its template says the risk and the action
    severity: Severity

    @property
    def code(self) -> Code:
        return self.message.code


@dataclass(frozen=True, slots=True, kw_only=True)
class QuantizationOption:
    """The best one-node layout of one weight dtype (for the quantization table)."""

    weight_dtype: str
    layout: str
    weights_gib_per_gpu: float
    weights_gib_total: float
    kv_tokens_per_replica: int
    max_concurrency_per_replica: float
    fits_one_node: bool
    serves_load: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkSummary:
    label: str
    bandwidth_gbs: float
    latency_us: float


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkSummary:
    intra_node: LinkSummary
    inter_node: LinkSummary
    overlap_factor: float
    domain_example_ms: dict[str, float]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSummary:
    name: str
    hf_repo: str
    slug: str
    total_params: int
    active_params: int
    requested_weight_dtype: str
    weight_dtype: str
    kv_bytes_per_token_full_model: float
    max_model_len: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelection:
    gpu: str
    nodes_offered: int
    nodes_used: int
    hosts: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Bundle:
    """One placement-group bundle of a replica and the node it lands on ("" when none has room)."""

    resources: dict[str, int | float]
    fits: bool
    node: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SingleBundle:
    """The naive one-bundle reservation of a whole replica, and why it can or cannot be placed."""

    resources: dict[str, int | float]
    placeable: bool
    reason: Message | None  # None when the bundle is placeable


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacementAlternative(_TypedEnums):
    bundles: tuple[dict[str, int | float], ...]
    strategy: PlacementStrategy


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement(_TypedEnums):
    """How one replica's GPUs are reserved as a Ray placement group (DOMAIN.md §5)."""

    required: bool
    gpus_per_replica: int
    strategy: PlacementStrategy
    bundles: tuple[Bundle, ...]
    placeable: bool
    single_bundle: SingleBundle
    alternative: PlacementAlternative | None
    pinned: Placement | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationNote:
    """The calibration profile a plan was computed with (added by the Django layer)."""

    profile: str  # the profile's public id
    key: str  # GPU type / model family / weight dtype
    version: int
    factors: dict[str, float | None]
    matches_layout: bool  # fitted on this GPU, model family and dtype


@dataclass(frozen=True, kw_only=True)
class PlanResult:
    """One engine run. Not slotted, so that `best` and `applied_assumptions` are cached."""

    recommendation: Recommendation
    candidates: tuple[Candidate, ...]
    pinned: Candidate | None
    quantization_options: tuple[QuantizationOption, ...]
    signals: tuple[Signal, ...]
    placement: Placement
    configs: dict[str, Any]
    pitfalls: tuple[Pitfall, ...]
    assumptions: dict[str, Any]
    network: NetworkSummary
    model: ModelSummary
    node_selection: NodeSelection
    calibration: CalibrationNote | None = None
    memory_rules: MemoryRules | None = None
    schema_version: int = SCHEMA_VERSION

    @cached_property
    def best(self) -> Candidate | None:
        """Return the recommended candidate (None only in a legacy snapshot that lacks it)."""
        wanted = self.recommendation.candidate_id
        return next(
            (c for c in (*self.candidates, *filter(None, [self.pinned])) if c.id == wanted), None
        )

    @cached_property
    def applied_assumptions(self) -> Assumptions:
        """Return the constants the plan was computed with, typed.

        `assumptions` keeps what was stored (an older engine's constants included, for the
        record); this keeps the constants the current engine knows, defaults for any newer one.
        """
        known = {f.name for f in fields(Assumptions)}
        return Assumptions(**{k: v for k, v in self.assumptions.items() if k in known})

    @property
    def hosts(self) -> tuple[str, ...]:
        """Return the machines the recommendation uses."""
        if self.node_selection.hosts:
            return self.node_selection.hosts
        return self.best.host_names if self.best else ()

    def to_dict(self) -> dict[str, Any]:
        """Return the whole result as a JSON-able dict (numbers rounded to 3 decimals)."""
        out: dict[str, Any] = plain(self)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanResult:
        """Return the result a saved plan stored, whatever engine version stored it.

        Raise ResultFormatError naming the field when the data cannot be read.
        """
        return _read(_upgrade(data))


class ResultFormatError(ValueError):
    """A stored result that no version of the contract describes."""


# --- reading stored results -------------------------------------------------------------------


def _upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1: results stored before the contract was versioned (engine 1.0.x).

    The engine's first release did not compute `pp_comm_per_decode_step_ms` (0: no pipeline
    hop was counted), and snapshots were stored without validation (hand-made ones lacked whole
    sections), so every absent field is completed with its empty value: 0, "", False, nothing.
    Readers show what is there.
    """
    out = dict(data)
    out["candidates"] = [
        {"pp_comm_per_decode_step_ms": 0.0, **c} if isinstance(c, Mapping) else c
        for c in out.get("candidates") or []
    ]
    return _complete(PlanResult, out)


def _upgrade_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 → 3 (issue 13): memory breakdowns gain kv_groups and blocks_per_request, the
    result gains memory_rules. Plans stored before knew neither: 1 group, 0 blocks (unknown),
    no rules named.
    """
    return _complete(PlanResult, data)


def _upgrade_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 → 4 (issue 12): serving predictions name what timed their steps
    (step_backend, step_backend_note). Every plan stored before was timed by the roofline.
    """
    return _complete(PlanResult, data)


def _upgrade_v4(data: dict[str, Any]) -> dict[str, Any]:
    """Version 4 → 5 (issue 18): messages are codes with typed parameters, no English
    (planner/engine/legacy_messages.py reads the English of earlier versions back)."""
    return upgrade_messages(data)


def _upgrade_v5(data: dict[str, Any]) -> dict[str, Any]:
    """Version 5 → 6 (issue 12): serving predictions say which calibration runs their band
    comes from (band_runs, band_regime). A plan stored before has none: 0 runs, no regime (the
    page then names the published runs in general)."""
    return _complete(PlanResult, data)


def ranked(value: float | None) -> float:
    """Return a speed figure as ranking and reasons compare it: 0 for a layout that never starts
    (its figures are None; ranking puts it last and no reason quotes it as a speed)."""
    return 0.0 if value is None else value


# The speed figures of a candidate (Candidate), None when its memory does not fit.
SPEED_FIELDS = (
    "comm_per_decode_step_ms",
    "pp_comm_per_decode_step_ms",
    "comm_per_prefill_ms",
    "decode_step_ms",
    "decode_compute_ms",
    "itl_ms",
    "ttft_ms",
    "batch_per_replica",
    "output_throughput_tok_s",
    "total_throughput_tok_s",
    "capacity_output_tok_s",
)


def _without_phantom_speeds(cand: Any) -> Any:
    """Return a stored candidate whose memory did not fit with its speeds None (not ~1e14 ms)."""
    if not isinstance(cand, Mapping) or cand.get("fits", True):
        return cand
    reason = cand.get("rejected_reason")
    if isinstance(reason, Mapping) and reason.get("code") == Code.REJECT_ROOM.value:
        return cand  # it fits, there was no room: what it would deliver once placed stays
    return {**cand, **dict.fromkeys(SPEED_FIELDS)}


def _upgrade_v6(data: dict[str, Any]) -> dict[str, Any]:
    """Version 6 → 7 (issue 32): a layout whose memory does not fit has no speed figures
    (None instead of TTFT ~1e14 ms and 0 tok/s), and serving predictions say when measured
    kernel tables timed none or only some of the steps (step_backend_notice; none before)."""
    out = dict(data)
    out["candidates"] = [_without_phantom_speeds(c) for c in out.get("candidates") or []]
    if out.get("pinned") is not None:
        out["pinned"] = _without_phantom_speeds(out["pinned"])
    return _complete(PlanResult, out)


_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _upgrade_v1,
    2: _upgrade_v2,
    3: _upgrade_v3,
    4: _upgrade_v4,
    5: _upgrade_v5,
    6: _upgrade_v6,
}


def _upgrade(data: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise ResultFormatError(f"a stored result is an object, not {type(data).__name__}")
    out = dict(data)
    version = out.get("schema_version", 1)
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise ResultFormatError(f"schema_version {version!r} is not one this engine reads")
    while version < SCHEMA_VERSION:
        out = _UPGRADES[version](out)
        version += 1
    out["schema_version"] = SCHEMA_VERSION
    return out


# Enum values for legacy snapshots that omitted them: the least committal member.
_LEGACY_ENUM_DEFAULTS: dict[type[StrEnum], StrEnum] = {
    Route: Route.NONE,
    Backend: Backend.MP,
    Balancer: Balancer.NONE,
    CandidateKind: CandidateKind.INTRA_NODE,
    Severity: Severity.INFO,
    Direction: Direction.AGAINST_RAY,
    Strength: Strength.LOW,
    PlacementStrategy: PlacementStrategy.STRICT_SPREAD,
}


def _empty(tp: Any) -> Any:
    """Return the empty value of a field type (for completing legacy snapshots)."""
    origin = get_origin(tp)
    if origin in (Union, UnionType) and NoneType in get_args(tp):
        return None
    if tp is Message:
        return legacy("").to_json()
    if is_dataclass(tp) and isinstance(tp, type):
        return _complete(tp, {})
    if isinstance(tp, type) and issubclass(tp, StrEnum):
        return _LEGACY_ENUM_DEFAULTS[tp].value
    if origin is tuple or tp is tuple:
        return []
    if origin is dict or tp is dict:
        return {}
    return {str: "", int: 0, float: 0.0, bool: False}.get(tp)


def _complete(cls: type, data: Any) -> Any:
    """Return `data` with every field of dataclass `cls` present, recursively."""
    if not isinstance(data, Mapping):
        return data
    hints = get_type_hints(cls)
    out = dict(data)
    for f in fields(cls):
        tp = hints[f.name]
        if f.name not in out:
            if f.default is not MISSING:
                out[f.name] = f.default
            elif f.default_factory is not MISSING:
                out[f.name] = f.default_factory()
            else:
                out[f.name] = _empty(tp)
            continue
        out[f.name] = _complete_value(tp, out[f.name])
    return out


def _complete_value(tp: Any, value: Any) -> Any:
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, UnionType):
        inner = [a for a in args if a is not NoneType]
        return None if value is None else _complete_value(inner[0], value)
    if tp is Message:
        return value  # a leaf: a message is upgraded as a whole (_upgrade_v3)
    if is_dataclass(tp) and isinstance(tp, type):
        return _complete(tp, value)
    if origin is tuple and args and isinstance(value, list | tuple):
        return [_complete_value(args[0], v) for v in value]
    return value


@cache
def validator() -> Any:
    """The plan result's pydantic validator (built once per process, early by core.warmup)."""
    # pydantic validates the dataclasses in place (types, StrEnums, nesting) and names the
    # field that is wrong; imported late so that the engine's own import stays light.
    from pydantic import TypeAdapter

    return TypeAdapter(PlanResult)


def _read(data: dict[str, Any]) -> PlanResult:
    from pydantic import ValidationError

    try:
        result: PlanResult = validator().validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ResultFormatError(f"{where}: {first['msg']}") from exc
    return result
