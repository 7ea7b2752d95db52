"""The route, the executor backend and the balancer of a recommendation."""

from __future__ import annotations

from planner.engine.messages import Code, Message, message
from planner.engine.result import Backend, Balancer, Candidate, Route, Signal
from planner.engine.signals import wants_route_c
from planner.engine.spec import PlanSpec


def choose_route(spec: PlanSpec, best: Candidate, signals: list[Signal], nodes_used: int) -> Route:
    """Return the route of DOMAIN.md §3: nothing fits, span nodes (B), a Ray pool (C), else A."""
    if not best.fits:
        return Route.NONE
    if best.spans_nodes:
        return Route.B
    if wants_route_c(signals) and (nodes_used > 1 or spec.operations.multi_model_pool):
        return Route.C
    return Route.SINGLE if best.replicas == 1 else Route.A


def choose_backend(spec: PlanSpec, route: Route) -> tuple[Backend, Message]:
    """Return the executor backend of the route and why."""
    ops = spec.operations
    if route == Route.C:
        return Backend.RAY, message(Code.WHY_RAY_SERVE)
    shared = spec.hardware.pool_kind == "shared"
    if route == Route.B and (shared or ops.ray_in_use or ops.avoid_manual_nccl):
        return Backend.RAY, message(Code.WHY_SHARED_POOL if shared else Code.WHY_RAY_MANAGES)
    return Backend.MP, message(
        Code.WHY_MP_ACROSS_NODES if route == Route.B else Code.WHY_MP_INSIDE_NODE
    )


def choose_balancer(route: Route, best: Candidate) -> Balancer:
    """Return what spreads requests over the replicas."""
    if route == Route.C:
        return Balancer.RAY_SERVE
    if route != Route.NONE and best.replicas > 1:
        return Balancer.NGINX
    return Balancer.NONE
