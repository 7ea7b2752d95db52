"""What a saved pool plan predicted for one of its models, as the typed values monitoring reads.

A server linked to a model of a pool plan is compared like a server linked to a single-model
plan (plan_values.PlanValues): the model's own spec, on the pool's machines, at the layout the
pool placed it with (its TP, replicas, GPU type and memory share). The layout is evaluated again
by the engine with default assumptions, as the pool plan itself was (pools carry no
calibration).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.engine.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from planner.engine.at_concurrency import (
    LayoutUnavailable,
    ReplicaLayout,
    ServingPoint,
    predict_replica,
)
from planner.engine.layouts import evaluate, group_nodes, spec_assumptions
from planner.engine.pool import PoolResult, pool_spec_from_dict
from planner.engine.pool.result import PlacedModel
from planner.engine.result import Candidate, ResultFormatError
from planner.engine.spec import Layout, PlanSpec, SpecError
from planner.models import PoolPlan
from planner.selectors.plan_values import PlanUnreadable, PlanValues, planned_replica


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolModelPlan:
    """One placed model of a saved pool plan, read once: its values and its predictions."""

    pool_plan: PoolPlan
    spec: PlanSpec  # the model's spec, with the memory share the pool gave it
    placed: PlacedModel
    assumptions: Assumptions
    route: str

    @property
    def layout(self) -> ReplicaLayout:
        p = self.placed
        return ReplicaLayout(gpu=p.gpu, tp=p.tp, pp=1, weight_dtype=p.weight_dtype)

    def values(self) -> PlanValues:
        """Return the model as the values a plan comparison reads."""
        cand = self._candidate()
        spec, pool_plan = self.spec, self.pool_plan
        return PlanValues(
            public_id=str(pool_plan.public_id),
            title=f"{pool_plan.title} · {self.placed.name}",
            url=pool_plan.get_absolute_url(),
            model_name=spec.model_name,
            model_slug=spec.model_slug or "",
            hf_repo=spec.hf_repo,
            model_family=spec.architecture.model_type or "unknown",
            route=self.route,
            replicas=max(cand.replicas, 1),
            nodes_per_replica=1,
            max_model_len=spec.max_model_len,
            kv_cache_dtype=spec.kv_cache_dtype,
            gpu_memory_utilization=spec.gpu_memory_utilization,
            ttft_slo_ms=spec.workload.ttft_slo_ms,
            itl_slo_ms=spec.workload.itl_slo_ms,
            replica=planned_replica(cand, self.layout, self.assumptions.block_size_tokens),
            calibration=None,
        )

    def predict_at(
        self,
        *,
        concurrency_per_replica: float,
        avg_input_tokens: float | None = None,
        avg_output_tokens: float | None = None,
    ) -> ServingPoint:
        """Return one replica of the model at the observed concurrency and lengths."""
        try:
            return predict_replica(
                self.spec,
                self.layout,
                concurrency_per_replica=concurrency_per_replica,
                avg_input_tokens=avg_input_tokens,
                avg_output_tokens=avg_output_tokens,
                a=self.assumptions,
                percentiles=True,
            )
        except LayoutUnavailable as exc:
            raise PlanUnreadable(str(exc)) from exc

    def _candidate(self) -> Candidate:
        p = self.placed
        groups = group_nodes(self.spec.hardware.nodes)
        group = next((g for g in groups if g.gpu_slug == p.gpu), None)
        cand = None
        if group is not None:
            layout = Layout(tp=p.tp, pp=1, replicas=p.replicas)
            cand = evaluate(
                self.spec, group, layout, dtype=p.weight_dtype, a=self.assumptions, pinned=True
            )
        if cand is None or not cand.fits:
            raise PlanUnreadable(
                f"{p.name}: TP{p.tp}×{p.replicas} on {p.gpu} no longer evaluates on the pool's "
                "machines"
            )
        return cand


def pool_model_plan(pool_plan: PoolPlan, name: str) -> PoolModelPlan:
    """Return the model `name` of a saved pool plan; raise PlanUnreadable when it has none."""
    try:
        pool = pool_spec_from_dict(pool_plan.engine_input)
        result = PoolResult.from_dict(pool_plan.result)
    except (SpecError, ResultFormatError) as exc:
        raise PlanUnreadable(f"pool plan {pool_plan.public_id}: {exc}") from exc
    placed = result.model(name)
    model = next((m for m in pool.models if m.name == name), None)
    if placed is None or model is None:
        raise PlanUnreadable(f"pool plan {pool_plan.public_id} places no model called {name!r}")
    spec = replace(model.spec, gpu_memory_utilization=placed.gpu_memory_utilization)
    return PoolModelPlan(
        pool_plan=pool_plan,
        spec=spec,
        placed=placed,
        assumptions=spec_assumptions(spec, DEFAULT_ASSUMPTIONS),
        route=result.route.route.value,
    )
