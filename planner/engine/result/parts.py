"""The parts of a plan result: candidates and their memory, the recommendation, signals, pitfalls,
summaries, placement and bundles.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.engine.messages import Code, Message
from planner.engine.result.choices import (
    Backend,
    Balancer,
    CandidateKind,
    Direction,
    PlacementStrategy,
    Route,
    Severity,
    Strength,
    layout_label,
)
from planner.engine.result.typed import TypedEnums
from planner.engine.serving import Prediction, ServingContext


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
class Candidate(TypedEnums):
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
class Recommendation(TypedEnums):
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
class Signal(TypedEnums):
    message: Message  # the signal's code, with the why of its verdict
    direction: Direction
    strength: Strength
    hit: bool

    @property
    def code(self) -> Code:
        return self.message.code


@dataclass(frozen=True, slots=True, kw_only=True)
class Pitfall(TypedEnums):
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
class PlacementAlternative(TypedEnums):
    bundles: tuple[dict[str, int | float], ...]
    strategy: PlacementStrategy


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement(TypedEnums):
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
