"""For-Ray and against-Ray signals (DOMAIN.md §4)."""

from __future__ import annotations

from planner.engine.messages import Code, Message, Param, Term, message
from planner.engine.result import Candidate, Signal
from planner.engine.spec import PlanSpec

STRENGTH_RANK = {"low": 0, "medium": 1, "medium-high": 2, "high": 3}


def _signal(
    code: Code, direction: str, strength: str, hit: bool, why: Code | Message, **params: Param
) -> Signal:
    reason = why if isinstance(why, Message) else message(why)
    return Signal(
        message=message(code, why=reason, **params),
        direction=direction,
        strength=strength,
        hit=hit,
    )


def evaluate_signals(spec: PlanSpec, best: Candidate, nodes_used: int) -> list[Signal]:
    """Return every signal with whether it hits for this spec and layout."""
    ops, wl = spec.operations, spec.workload
    swings = wl.traffic_shape in ("diurnal", "bursty")
    spans = best.nodes_per_replica > 1
    quant_fits = best.nodes_per_replica == 1
    fixed_fleet = nodes_used <= 2 and not ops.models_change_often and not ops.multi_model_pool
    return [
        _signal(
            Code.SIG_MODELS_CHANGE_OFTEN,
            "for_ray",
            "medium",
            ops.models_change_often,
            Code.WHY_MODELS_CHANGE if ops.models_change_often else Code.WHY_MODEL_FIXED,
        ),
        _signal(
            Code.SIG_MULTI_MODEL_POOL,
            "for_ray",
            "high",
            ops.multi_model_pool,
            Code.WHY_MODELS_SHARE_POOL if ops.multi_model_pool else Code.WHY_ONE_MODEL,
        ),
        _signal(
            Code.SIG_TRAFFIC_SWINGS,
            "for_ray",
            "medium-high",
            swings,
            Code.WHY_AUTOSCALING if swings else Code.WHY_TRAFFIC_STEADY,
            shape=Term(wl.traffic_shape),
        ),
        _signal(
            Code.SIG_SELF_HEALING_SLO,
            "for_ray",
            "medium",
            ops.self_healing_slo,
            Code.WHY_SELF_HEALING if ops.self_healing_slo else Code.WHY_NO_SELF_HEALING,
        ),
        _signal(
            Code.SIG_RAY_IN_USE,
            "for_ray",
            "high",
            ops.ray_in_use,
            Code.WHY_RAY_ESTATE if ops.ray_in_use else Code.WHY_NO_RAY_CLUSTER,
        ),
        _signal(
            Code.SIG_CROSS_NODE_NO_NCCL,
            "for_ray",
            "medium",
            spans and ops.avoid_manual_nccl,
            Code.WHY_RAY_STARTS_WORKERS
            if spans and ops.avoid_manual_nccl
            else (Code.WHY_NO_REPLICA_SPANS if not spans else Code.WHY_LAUNCH_BY_HAND),
        ),
        _signal(
            Code.SIG_FIXED_SMALL_FLEET,
            "against_ray",
            "medium",
            fixed_fleet,
            message(
                Code.WHY_FIXED_FLEET if fixed_fleet else Code.WHY_FLEET_OR_CHANGING,
                nodes=nodes_used,
            ),
        ),
        _signal(
            Code.SIG_STEADY_TRAFFIC,
            "against_ray",
            "medium",
            not swings,
            Code.WHY_FIXED_REPLICAS
            if not swings
            else message(Code.WHY_TRAFFIC_IS, shape=Term(wl.traffic_shape)),
        ),
        _signal(
            Code.SIG_GATEWAY_AVAILABLE,
            "against_ray",
            "medium",
            ops.gateway_available,
            Code.WHY_GATEWAY if ops.gateway_available else Code.WHY_NO_GATEWAY,
        ),
        _signal(
            Code.SIG_QUANTIZATION_FITS,
            "against_ray",
            "medium",
            quant_fits,
            message(Code.WHY_DTYPE_FITS_NODE, dtype=best.weight_dtype)
            if quant_fits
            else Code.WHY_MUST_SPAN,
        ),
        _signal(
            Code.SIG_NO_RAY_EXPERIENCE,
            "against_ray",
            "medium",
            not ops.team_ray_experience,
            Code.WHY_NO_RAY_EXPERIENCE if not ops.team_ray_experience else Code.WHY_RAY_EXPERIENCE,
        ),
    ]


def wants_route_c(signals: list[Signal]) -> bool:
    """Return whether the for-Ray signals call for a Ray Serve platform (Route C)."""
    hits = [s for s in signals if s.direction == "for_ray" and s.hit]
    strong = [s for s in hits if STRENGTH_RANK[s.strength] >= STRENGTH_RANK["high"]]
    medium = [s for s in hits if STRENGTH_RANK[s.strength] >= STRENGTH_RANK["medium"]]
    return bool(strong) or len(medium) >= 2
