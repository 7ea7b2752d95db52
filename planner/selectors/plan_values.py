"""What a saved plan predicted, as typed values: the only reader of a plan's result for monitoring.

Monitoring and calibration compare servers with these; they never look into the result JSON
themselves. A prediction at another concurrency re-evaluates the plan's layout with the plan's
own saved assumptions (calibrated ones included), so an old plan keeps predicting what it did.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.engine.assumptions import Assumptions
from planner.engine.at_concurrency import (
    LayoutUnavailable,
    ReplicaLayout,
    ServingPoint,
    predict_replica,
)
from planner.engine.result import CalibrationNote, Candidate, PlanResult
from planner.engine.spec import PlanSpec, SpecError, spec_from_dict
from planner.models import Plan
from planner.selectors.plans import plan_result


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedReplica:
    """One replica of the recommended layout, at the plan's own workload."""

    layout: ReplicaLayout
    kv_blocks: int  # per GPU of the limiting stage, as vLLM's num_gpu_blocks counts them
    kv_tokens: int
    block_size_tokens: int
    kv_budget_gib: float  # per GPU
    kv_bytes_per_token: float  # per GPU
    concurrency: float  # running requests the plan expects on one replica
    # No speed figures here: the plan's speed is the serving model's (predict_at), at the load
    # a server is seen under; the closed-form steady state only ranks candidates.


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanValues:
    """The planned values monitoring compares a server with."""

    public_id: str
    title: str
    url: str
    model_name: str
    model_slug: str
    hf_repo: str
    model_family: str  # the architecture's model_type, e.g. "llama", "qwen2"
    route: str
    replicas: int
    nodes_per_replica: int
    max_model_len: int
    kv_cache_dtype: str
    gpu_memory_utilization: float
    ttft_slo_ms: float | None
    itl_slo_ms: float | None
    replica: PlannedReplica
    calibration: CalibrationNote | None

    @property
    def key(self) -> str:
        """Return the calibration key: GPU type × model family × weight dtype."""
        return calibration_key(
            self.replica.layout.gpu, self.model_family, self.replica.layout.weight_dtype
        )


class PlanUnreadable(ValueError):
    """The saved plan has no recommended layout (nothing fit) or an unreadable input."""


def calibration_key(gpu: str, model_family: str, weight_dtype: str) -> str:
    return f"{gpu}/{model_family}/{weight_dtype}"


def plan_spec(plan: Plan) -> PlanSpec:
    """Return the engine input the plan was computed from, parsed."""
    try:
        return spec_from_dict(plan.engine_input)
    except SpecError as exc:
        raise PlanUnreadable(f"plan {plan.public_id}: {exc.errors}") from exc


def plan_assumptions(plan: Plan) -> Assumptions:
    """Return the assumptions the plan was computed with (defaults for any it predates)."""
    return plan_result(plan).applied_assumptions


def plan_values(plan: Plan) -> PlanValues:
    """Return the plan's model, layout and per-replica predictions as typed values."""
    spec = plan_spec(plan)
    result = plan_result(plan)
    cand = _recommended(plan, result)
    a = plan_assumptions(plan)
    block = a.block_size_tokens
    replicas = max(cand.replicas, 1)
    layout = _layout(cand)
    return PlanValues(
        public_id=str(plan.public_id),
        title=plan.title,
        url=plan.get_absolute_url(),
        model_name=spec.model_name,
        model_slug=spec.model_slug or plan.model_slug,
        hf_repo=spec.hf_repo,
        model_family=spec.architecture.model_type or "unknown",
        route=plan.route,
        replicas=replicas,
        nodes_per_replica=cand.nodes_per_replica,
        max_model_len=spec.max_model_len,
        kv_cache_dtype=spec.kv_cache_dtype,
        gpu_memory_utilization=spec.gpu_memory_utilization,
        ttft_slo_ms=spec.workload.ttft_slo_ms,
        itl_slo_ms=spec.workload.itl_slo_ms,
        replica=planned_replica(cand, layout, block),
        calibration=result.calibration,
    )


def planned_replica(cand: Candidate, layout: ReplicaLayout, block: int) -> PlannedReplica:
    """Return one replica of `cand` at its plan's workload (KV blocks of `block` tokens)."""
    return PlannedReplica(
        layout=layout,
        kv_blocks=cand.gpu_blocks(block),
        kv_tokens=cand.kv_tokens_per_replica,
        block_size_tokens=block,
        kv_budget_gib=cand.memory.kv_budget_gib,
        kv_bytes_per_token=cand.memory.kv_bytes_per_token,
        concurrency=cand.batch_per_replica,
    )


def predict_at(
    plan: Plan,
    *,
    concurrency_per_replica: float,
    avg_input_tokens: float | None = None,
    avg_output_tokens: float | None = None,
) -> ServingPoint:
    """Return one replica's predicted speed at the observed concurrency and request lengths.

    TTFT and ITL p95 are simulated, like for like with the servers' p95s; the plan's own saved
    assumptions (calibrated ones included) make the prediction.
    """
    try:
        return predict_replica(
            plan_spec(plan),
            _layout(_recommended(plan, plan_result(plan))),
            concurrency_per_replica=concurrency_per_replica,
            avg_input_tokens=avg_input_tokens,
            avg_output_tokens=avg_output_tokens,
            a=plan_assumptions(plan),
            percentiles=True,
        )
    except LayoutUnavailable as exc:
        raise PlanUnreadable(str(exc)) from exc


def _recommended(plan: Plan, result: PlanResult) -> Candidate:
    if result.best is None:
        raise PlanUnreadable(f"plan {plan.public_id} recommends no layout")
    return result.best


def _layout(cand: Candidate) -> ReplicaLayout:
    return ReplicaLayout(gpu=cand.gpu, tp=cand.tp, pp=cand.pp, weight_dtype=cand.weight_dtype)
