"""Plan vs reality, like for like: one server against one replica, or linked servers against a plan.

A target linked with scope "replica" is one replica of its plan; asked for the plan scope, the
targets linked to the same plan are summed against the whole plan. A target linked with scope
"plan" (a Route B instance, a Route C pool behind one endpoint) is always the whole plan.
Planned values come from `planner.selectors.plan_values` (a model of a pool plan: from
`planner.selectors.pool_values`); throughput and latency are predicted at the concurrency the
servers really ran, not at the plan's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from functools import partial

from django.utils.translation import gettext as _

from monitoring.models import PlanScope, Target, TargetKind
from monitoring.reality.observation import TargetObservation, observe
from monitoring.reality.server_checks import ComparisonWarning, sanity_warnings
from planner.decisions.selectors import LatencySlo, latency_slo
from planner.engine.at_concurrency import ServingPoint
from planner.selectors.plan_values import PlanUnreadable, PlanValues, plan_values, predict_at
from planner.selectors.pool_values import pool_model_plan


class Quantity(StrEnum):
    """The stable id of a comparison row (scripts and the page's data-quantity read it)."""

    REPLICAS = "replicas"
    KV_BLOCKS = "kv_blocks"
    KV_CAPACITY_TOKENS = "kv_capacity_tokens"
    RUNNING_REQUESTS = "running_requests"
    OUTPUT_THROUGHPUT = "output_throughput"
    TTFT_P95 = "ttft_p95"
    ITL_P95 = "itl_p95"
    TTFT_P95_SLO = "ttft_p95_slo"
    ITL_P95_SLO = "itl_p95_slo"


# How far an observation may stray from the prediction before it is highlighted, in %.
TOLERANCE_PCT = {
    Quantity.REPLICAS: 0.0,
    Quantity.KV_BLOCKS: 10.0,
    Quantity.KV_CAPACITY_TOKENS: 10.0,
    Quantity.OUTPUT_THROUGHPUT: 20.0,
    Quantity.TTFT_P95: 30.0,
    Quantity.ITL_P95: 20.0,
}


class NotComparable(PlanUnreadable):
    """The target's kind exposes nothing to compare with a plan's predictions."""


class Scope(StrEnum):
    REPLICA = "replica"
    PLAN = "plan"


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparisonRow:
    quantity: Quantity
    label: str
    unit: str
    planned: float | None
    observed: float | None
    deviation_pct: float | None  # signed: + means the server shows more than planned
    within_tolerance: bool | None  # None: not judged (context rows, or a value is missing)
    tolerance_pct: float | None
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanComparison:
    plan: PlanValues
    scope: Scope
    targets: tuple[str, ...]
    window_start: datetime
    window_end: datetime
    warnings: tuple[ComparisonWarning, ...]
    rows: tuple[ComparisonRow, ...]

    def row(self, quantity: Quantity) -> ComparisonRow | None:
        return next((r for r in self.rows if r.quantity == quantity), None)

    @property
    def deviations(self) -> tuple[ComparisonRow, ...]:
        """The rows judged outside their tolerance."""
        return tuple(r for r in self.rows if r.within_tolerance is False)

    @property
    def ttft_slo_ms(self) -> float | None:
        row = self.row(Quantity.TTFT_P95_SLO)
        return row.planned if row else None

    @property
    def itl_slo_ms(self) -> float | None:
        row = self.row(Quantity.ITL_P95_SLO)
        return row.planned if row else None


def deviation_pct(planned: float | None, observed: float | None) -> float | None:
    """Return the signed deviation of `observed` from `planned`, in % of planned."""
    if planned is None or observed is None or planned == 0:
        return None
    return round(100.0 * (observed - planned) / planned, 1)


def _row(
    quantity: Quantity,
    label: str,
    unit: str,
    planned: float | None,
    observed: float | None,
    note: str = "",
) -> ComparisonRow:
    tolerance = TOLERANCE_PCT.get(quantity)
    deviation = deviation_pct(planned, observed)
    within = None if tolerance is None or deviation is None else abs(deviation) <= tolerance
    return ComparisonRow(
        quantity=quantity,
        label=label,
        unit=unit,
        planned=planned,
        observed=observed,
        deviation_pct=deviation,
        within_tolerance=within,
        tolerance_pct=tolerance,
        note=note,
    )


def _slo_row(
    quantity: Quantity, label: str, threshold: float | None, observed: float | None
) -> ComparisonRow:
    """A threshold row: within when the observation does not exceed the threshold."""
    within = None if threshold is None or observed is None else observed <= threshold
    return ComparisonRow(
        quantity=quantity,
        label=label,
        unit="ms",
        planned=threshold,
        observed=observed,
        deviation_pct=deviation_pct(threshold, observed),
        within_tolerance=within,
        tolerance_pct=None,
        note=_("threshold: the observed p95 must not exceed it"),
    )


def _sum(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _max(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def linked_targets(target: Target) -> list[Target]:
    """Return every replica-scope target linked to the same plan, or to the same model of the
    same pool plan (this one included)."""
    same = (
        {"plan": target.plan}
        if target.plan_id is not None
        else {"pool_plan": target.pool_plan, "pool_model": target.pool_model}
    )
    return list(
        Target.objects.defer("token")
        .filter(**same, plan_scope=PlanScope.REPLICA, kind=target.kind)
        .order_by("name")
    )


@dataclass(frozen=True, slots=True)
class _Link:
    """What a target is compared with: a plan, or one model of a pool plan."""

    values: PlanValues
    predict: Callable[..., ServingPoint]  # one replica at (concurrency_per_replica, lengths)


def _link(target: Target) -> _Link:
    """Return the plan, or the pool plan's model, a linked target is compared with (each read
    once for every replica compared)."""
    if target.plan is not None:
        plan = target.plan
        return _Link(values=plan_values(plan), predict=partial(predict_at, plan))
    model = pool_model_plan(target.pool_plan, target.pool_model)
    return _Link(values=model.values(), predict=model.predict_at)


def plan_comparison(
    target: Target, *, start: datetime, end: datetime, scope: str | None = None
) -> PlanComparison | None:
    """Compare `target` (or every target of its plan) with the linked plan over the window.

    Return None when the target is not linked to a plan; raise PlanUnreadable when the plan
    recommends nothing to compare with.
    """
    if target.plan_id is None and target.pool_plan_id is None:
        return None
    if target.kind != TargetKind.VLLM:
        raise NotComparable(
            _(
                "Plan vs reality compares vLLM servers with the plan's replicas: link this "
                "plan's vLLM endpoints as targets too."
            )
        )
    link = _link(target)
    values = link.values
    whole = target.plan_scope == PlanScope.PLAN
    chosen = Scope.PLAN if whole or scope == Scope.PLAN else Scope.REPLICA
    replicas = [] if whole else linked_targets(target)
    members = [target] if whole or chosen == Scope.REPLICA else replicas
    observations = [observe(t, start, end) for t in members]
    # A whole-plan endpoint spreads its load over the planned replicas.
    share = values.replicas if whole else 1
    predictions: list[ServingPoint | None] = []
    for obs in observations:
        if obs.concurrency is None:
            predictions.append(None)
            continue
        predictions.append(
            link.predict(
                concurrency_per_replica=obs.concurrency / share,
                avg_input_tokens=obs.avg_input_tokens,
                avg_output_tokens=obs.avg_output_tokens,
            )
        )
    slo = latency_slo(target.decision_id)
    rows = _rows(values, chosen, whole, observations, predictions, slo)
    warnings = sanity_warnings(values, observations, whole=whole, replicas_found=len(replicas))
    return PlanComparison(
        plan=values,
        scope=chosen,
        targets=tuple(t.name for t in members),
        window_start=start,
        window_end=end,
        warnings=tuple(warnings),
        rows=tuple(rows),
    )


def _rows(
    values: PlanValues,
    scope: Scope,
    whole: bool,
    observations: list[TargetObservation],
    predictions: list[ServingPoint | None],
    slo: LatencySlo,
) -> list[ComparisonRow]:
    if scope == Scope.REPLICA:
        rows = _replica_rows(values, observations[0])
        speed = _replica_speed(observations[0], predictions[0])
    else:
        rows = _plan_rows(values, whole, observations)
        speed = _plan_speed(values.replicas if whole else 1, observations, predictions)
    return [*rows, *_speed_rows(speed, scope), *_slo_rows(values, slo, speed)]


@dataclass(frozen=True, slots=True)
class _Speed:
    """Planned (at the observed concurrency) and observed throughput, TTFT p95 and ITL p95."""

    planned: tuple[float | None, float | None, float | None]
    observed: tuple[float | None, float | None, float | None]


def _replica_rows(values: PlanValues, obs: TargetObservation) -> list[ComparisonRow]:
    replica = values.replica
    return [
        _row(
            Quantity.KV_BLOCKS,
            _("KV-cache blocks per GPU (vllm:cache_config_info num_gpu_blocks)"),
            "blocks",
            float(replica.kv_blocks),
            None if obs.served.kv_blocks is None else float(obs.served.kv_blocks),
        ),
        _row(
            Quantity.RUNNING_REQUESTS,
            _("Running requests (mean; the plan's expected load for context)"),
            "requests",
            round(replica.concurrency, 1),
            None if obs.concurrency is None else round(obs.concurrency, 1),
        ),
    ]


def _replica_speed(obs: TargetObservation, pred: ServingPoint | None) -> _Speed:
    planned = (
        (None, None, None)
        if pred is None
        else (pred.output_tok_s, _p95(pred, "ttft"), _p95(pred, "itl"))
    )
    return _Speed(planned=planned, observed=(obs.output_tok_s, obs.ttft_p95_ms, obs.itl_p95_ms))


def _p95(point: ServingPoint, which: str) -> float:
    """Return the simulated p95, or the mean when the model could not simulate the layout."""
    if which == "ttft":
        return point.ttft_p95_ms if point.ttft_p95_ms is not None else point.ttft_ms
    return point.itl_p95_ms if point.itl_p95_ms is not None else point.itl_ms


def _plan_rows(
    values: PlanValues, whole: bool, observations: list[TargetObservation]
) -> list[ComparisonRow]:
    n = values.replicas
    return [
        _row(
            Quantity.REPLICAS,
            _("Replicas (targets linked to the plan)"),
            "replicas",
            float(n),
            _replicas_seen(whole, observations),
        ),
        _row(
            Quantity.KV_CAPACITY_TOKENS,
            _("KV-cache capacity, all replicas"),
            "tokens",
            float(values.replica.kv_tokens * n),
            _sum([o.kv_capacity_tokens for o in observations]),
            "" if whole else _("planned: every planned replica; observed: the linked ones"),
        ),
        _row(
            Quantity.RUNNING_REQUESTS,
            _("Running requests, all replicas (mean; the plan's expected load)"),
            "requests",
            round(values.replica.concurrency * n, 1),
            _round(_sum([o.concurrency for o in observations])),
        ),
    ]


def _replicas_seen(whole: bool, observations: list[TargetObservation]) -> float | None:
    """Return the replicas the servers show: linked targets, or a whole-plan endpoint's engines.

    One address in front of a pool (a gateway, Ray Serve) does not say how many replicas it
    balances over: not judged unless it reports data-parallel engines.
    """
    if not whole:
        return float(len(observations))
    engines = observations[0].served.engines
    return float(engines) if engines > 1 else None


def _plan_speed(
    share: int, observations: list[TargetObservation], predictions: list[ServingPoint | None]
) -> _Speed:
    """Sum throughput over the linked targets; latency is the slowest replica's."""
    known = [p for p in predictions if p is not None]
    return _Speed(
        planned=(
            _sum([p.output_tok_s * share for p in known]),
            _max([_p95(p, "ttft") for p in known]),
            _max([_p95(p, "itl") for p in known]),
        ),
        observed=(
            _sum([o.output_tok_s for o in observations]),
            _max([o.ttft_p95_ms for o in observations]),
            _max([o.itl_p95_ms for o in observations]),
        ),
    )


def _speed_rows(speed: _Speed, scope: Scope) -> list[ComparisonRow]:
    at = _("predicted at the observed concurrency and request lengths")
    slowest = "" if scope == Scope.REPLICA else " " + _("(slowest replica)")
    labels = (
        (Quantity.OUTPUT_THROUGHPUT, _("Output throughput"), "tok/s"),
        (Quantity.TTFT_P95, _("TTFT p95") + slowest, "ms"),
        (Quantity.ITL_P95, _("Inter-token latency p95") + slowest, "ms"),
    )
    return [
        _row(quantity, label, unit, _round(planned), _round(observed), at)
        for (quantity, label, unit), planned, observed in zip(
            labels, speed.planned, speed.observed, strict=True
        )
    ]


def _slo_rows(values: PlanValues, slo: LatencySlo, speed: _Speed) -> list[ComparisonRow]:
    """The decision's thresholds, else the plan's workload SLOs."""
    ttft = slo.ttft_p95_ms if slo.ttft_p95_ms is not None else values.ttft_slo_ms
    itl = slo.itl_p95_ms if slo.itl_p95_ms is not None else values.itl_slo_ms
    return [
        _slo_row(
            Quantity.TTFT_P95_SLO, _("TTFT p95 against the SLO"), ttft, _round(speed.observed[1])
        ),
        _slo_row(
            Quantity.ITL_P95_SLO,
            _("Inter-token latency p95 against the SLO"),
            itl,
            _round(speed.observed[2]),
        ),
    ]


def _round(value: float | None) -> float | None:
    """Round to three significant figures: more digits than that are noise here."""
    if value is None:
        return None
    return float(f"{value:.3g}") if abs(value) < 1000 else float(round(value))


__all__ = [
    "ComparisonRow",
    "PlanComparison",
    "PlanUnreadable",
    "Quantity",
    "Scope",
    "deviation_pct",
    "linked_targets",
    "plan_comparison",
]
