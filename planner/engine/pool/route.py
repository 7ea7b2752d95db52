"""Route A or Route C for a pool: the Ray Serve question answered from the pool's facts.

Route A (one vLLM deployment per model behind one OpenAI-compatible router) wins when the set
of models is fixed: each model's GPUs are its own, there is nothing to move, and no Ray to run.
Route C (one Ray Serve LLM application per model in one serve config) earns its cost when
models change often (one config adds or drops an application), when GPUs should move between
models whose loads peak at different times (Serve's autoscaling), or when the pool must heal
itself under an SLO (Serve restarts replicas, and the models share failover). A team that
already runs Ray pays less for it.
"""

from __future__ import annotations

from planner.engine.messages import Code, Message, message
from planner.engine.pool.result import PlacedModel, PoolRoute, Router, gpus_in_use
from planner.engine.pool.spec import PoolSpec
from planner.engine.result import Route

# Signals for Route C and their weight; Route C is chosen at 2 or more.
_CHANGE_WEIGHT = 2
_OTHER_WEIGHT = 1
_ROUTE_C_AT = 2


def pool_route(spec: PoolSpec, placed: list[PlacedModel]) -> PoolRoute:
    """Return the route that serves the pool, with every signal weighed and its numbers."""
    ops = spec.models[0].spec.operations
    varying = [m.name for m in spec.models if m.spec.workload.traffic_shape != "steady"]
    spare = sum(n.usable_gpus for n in spec.hardware.nodes) - gpus_in_use(placed)
    reasons: list[Message] = []
    weight = 0
    if ops.models_change_often:
        weight += _CHANGE_WEIGHT
        reasons.append(message(Code.POOL_C_MODELS_CHANGE))
    if len(varying) >= 2:
        weight += _OTHER_WEIGHT
        reasons.append(
            message(Code.POOL_C_MOVE_GPUS, count=len(varying), models=", ".join(varying))
        )
    if ops.self_healing_slo:
        weight += _OTHER_WEIGHT
        reasons.append(message(Code.POOL_C_SELF_HEALING))
    if ops.ray_in_use:
        weight += _OTHER_WEIGHT
        reasons.append(message(Code.POOL_C_RAY_IN_USE))
    if weight >= _ROUTE_C_AT:
        reasons.append(message(Code.POOL_ROUTE_C, models=len(spec.models), spare=spare))
        return PoolRoute(route=Route.C, router=None, reasons=tuple(reasons))
    reasons.insert(
        0,
        message(
            Code.POOL_ROUTE_A,
            models=len(spec.models),
            gpus=gpus_in_use(placed),
            router=Router.LITELLM.value,
        ),
    )
    return PoolRoute(route=Route.A, router=Router.LITELLM, reasons=tuple(reasons))
