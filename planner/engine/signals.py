"""For-Ray and against-Ray signals (DOMAIN.md §4)."""

from __future__ import annotations

from planner.engine.result import Candidate, Signal
from planner.engine.spec import PlanSpec
from planner.engine.texts import message

STRENGTH_RANK = {"low": 0, "medium": 1, "medium-high": 2, "high": 3}


def _signal(
    sid: str, direction: str, strength: str, hit: bool, why: str, **params: object
) -> Signal:
    msg = message(sid, why=why, **params)
    return Signal(
        id=sid,
        rule=msg.rule,
        direction=direction,
        strength=strength,
        hit=hit,
        params={"why": why, **params},
        text=msg.text,
    )


def evaluate_signals(spec: PlanSpec, best: Candidate, nodes_used: int) -> list[Signal]:
    """Return every signal with whether it hits for this spec and layout."""
    ops, wl = spec.operations, spec.workload
    swings = wl.traffic_shape in ("diurnal", "bursty")
    spans = best.nodes_per_replica > 1
    quant_fits = best.nodes_per_replica == 1
    return [
        _signal(
            "sig_models_change_often",
            "for_ray",
            "medium",
            ops.models_change_often,
            "you said models change often" if ops.models_change_often else "the model is fixed",
        ),
        _signal(
            "sig_multi_model_pool",
            "for_ray",
            "high",
            ops.multi_model_pool,
            "several models share the GPU pool"
            if ops.multi_model_pool
            else "one model owns these GPUs",
        ),
        _signal(
            "sig_traffic_swings",
            "for_ray",
            "medium-high",
            swings,
            "Serve autoscaling follows the load; keep min_replicas ≥ 1"
            if swings
            else "traffic is steady",
            shape=wl.traffic_shape,
        ),
        _signal(
            "sig_self_healing_slo",
            "for_ray",
            "medium",
            ops.self_healing_slo,
            "an explicit self-healing SLO exists"
            if ops.self_healing_slo
            else "no explicit self-healing SLO was given",
        ),
        _signal(
            "sig_ray_in_use",
            "for_ray",
            "high",
            ops.ray_in_use,
            "a Ray estate already runs here and can be reused"
            if ops.ray_in_use
            else "no Ray cluster runs here today",
        ),
        _signal(
            "sig_cross_node_no_nccl",
            "for_ray",
            "medium",
            spans and ops.avoid_manual_nccl,
            "Ray starts the workers on every node (it does not add bandwidth)"
            if spans and ops.avoid_manual_nccl
            else (
                "no replica spans nodes" if not spans else "you accept launching each node by hand"
            ),
        ),
        _signal(
            "sig_fixed_small_fleet",
            "against_ray",
            "medium",
            nodes_used <= 2 and not ops.models_change_often and not ops.multi_model_pool,
            f"{nodes_used} fixed machine(s) serve one fixed model"
            if nodes_used <= 2 and not ops.models_change_often and not ops.multi_model_pool
            else f"{nodes_used} machines or changing models",
        ),
        _signal(
            "sig_steady_traffic",
            "against_ray",
            "medium",
            not swings,
            "fixed replicas cover steady traffic"
            if not swings
            else f"traffic is {wl.traffic_shape}",
        ),
        _signal(
            "sig_gateway_available",
            "against_ray",
            "medium",
            ops.gateway_available,
            "the existing gateway can balance the replicas"
            if ops.gateway_available
            else "no gateway was declared (Nginx config is generated)",
        ),
        _signal(
            "sig_quantization_fits",
            "against_ray",
            "medium",
            quant_fits,
            f"{best.weight_dtype} weights fit one node per replica"
            if quant_fits
            else "the model must span nodes",
        ),
        _signal(
            "sig_no_ray_experience",
            "against_ray",
            "medium",
            not ops.team_ray_experience,
            "the team has no Ray operations experience"
            if not ops.team_ray_experience
            else "the team operates Ray today",
        ),
    ]


def wants_route_c(signals: list[Signal]) -> bool:
    """Return whether the for-Ray signals call for a Ray Serve platform (Route C)."""
    hits = [s for s in signals if s.direction == "for_ray" and s.hit]
    strong = [s for s in hits if STRENGTH_RANK[s.strength] >= STRENGTH_RANK["high"]]
    medium = [s for s in hits if STRENGTH_RANK[s.strength] >= STRENGTH_RANK["medium"]]
    return bool(strong) or len(medium) >= 2
