"""The engine's output: frozen dataclasses that serialise to a JSON-able dict."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from planner.engine.serving import Prediction, ServingContext
from planner.engine.texts import Message


def _plain(value: Any) -> Any:
    if isinstance(value, Message):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in fields(value)
            if not f.metadata.get("internal")
        }
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    id: str
    tp: int
    pp: int
    replicas: int
    nodes_per_replica: int
    gpus_per_replica: int
    kind: str  # single-gpu | intra-node | cross-node-tp | cross-node-pp
    weight_dtype: str
    gpu: str
    hosts: tuple[tuple[str, ...], ...]
    memory: MemoryBreakdown
    kv_tokens_per_replica: int
    max_concurrency_per_replica: float
    max_concurrency_total: float
    tp_link: str
    pp_link: str
    comm_per_decode_step_ms: float
    pp_comm_per_decode_step_ms: float
    comm_per_prefill_ms: float
    decode_step_ms: float
    decode_compute_ms: float
    itl_ms: float
    ttft_ms: float
    batch_per_replica: float
    output_throughput_tok_s: float
    total_throughput_tok_s: float
    capacity_output_tok_s: float
    fits: bool
    serves_load: bool
    rejected_reason: str
    score: float
    pinned: bool = False
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
        return f"TP{self.tp}×PP{self.pp}×{self.replicas}"

    @property
    def spans_nodes(self) -> bool:
        return self.nodes_per_replica > 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation:
    route: str  # single | A | B | C | none (nothing fits)
    tp: int
    pp: int
    replicas: int
    nodes_per_replica: int
    weight_dtype: str
    executor_backend: str  # mp | ray
    balancer: str  # none | nginx | vllm-dp | ray-serve
    candidate_id: str
    summary: str
    reasons: tuple[Message, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Signal:
    id: str
    rule: str
    direction: str  # for_ray | against_ray
    strength: str  # low | medium | medium-high | high
    hit: bool
    params: dict[str, Any]
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Pitfall:
    id: str
    rule: str
    severity: str  # high | medium | low | info
    params: dict[str, Any]
    text: str
    action: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanResult:
    recommendation: Recommendation
    candidates: tuple[Candidate, ...]
    pinned: Candidate | None
    quantization_options: tuple[dict[str, Any], ...]
    signals: tuple[Signal, ...]
    placement: dict[str, Any]
    configs: dict[str, Any]
    pitfalls: tuple[Pitfall, ...]
    assumptions: dict[str, Any]
    network: dict[str, Any]
    model: dict[str, Any]
    node_selection: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> Candidate:
        """Return the recommended candidate."""
        return next(c for c in self.candidates if c.id == self.recommendation.candidate_id)

    def to_dict(self) -> dict[str, Any]:
        """Return the whole result as a JSON-able dict (numbers rounded to 3 decimals)."""
        out: dict[str, Any] = _plain(self)
        return out
