"""The single entry of the engine: plan(spec) -> PlanResult (DOMAIN.md §3 decision order)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from planner.engine.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from planner.engine.configs import build_configs, empty_configs
from planner.engine.dtype_ladder import (
    candidates_by_dtype,
    fill_quantization_options,
    quantization_option,
)
from planner.engine.layouts import NodeGroup, group_nodes, spec_assumptions
from planner.engine.memory_rules import (
    cuda_graph_rule_message,
    memory_rules_applied,
    memory_rules_message,
)
from planner.engine.messages import Code, message
from planner.engine.pinned import evaluate_pinned
from planner.engine.pitfalls import check_pitfalls
from planner.engine.placement import nodes_of, recommendation_placement
from planner.engine.reasons import (
    QUANT_LADDER,
    Deployment,
    Ranking,
    explain,
    quantize_for_fewer_nodes,
)
from planner.engine.result import (
    Backend,
    Candidate,
    NodeSelection,
    PlanResult,
    Recommendation,
    Route,
    ranked,
)
from planner.engine.route_choice import choose_backend, choose_balancer, choose_route
from planner.engine.serving_choice import simulated_indexes, with_serving
from planner.engine.signals import evaluate_signals
from planner.engine.small_replicas import prefer_small_replicas
from planner.engine.spec import Node, PlanSpec
from planner.engine.speed_rules import fp16_on_pre_ampere_message, speed_rules_messages
from planner.engine.summary import model_summary, network_summary, recommendation_summary
from planner.engine.vllm_flags import VLLM_VERSION


def _configs(
    spec: PlanSpec, best: Candidate, group: NodeGroup, route: Route, backend: Backend
) -> dict[str, Any]:
    """Return the deployment files of the route; none when nothing fits."""
    if route == Route.NONE:
        return {"vllm_version": VLLM_VERSION, **empty_configs()}
    return build_configs(spec, best, group.nodes, route=route, backend=backend)


def plan(spec: PlanSpec, assumptions: Assumptions | None = None) -> PlanResult:
    """Return the recommendation, every candidate layout, signals, placement, configs, pitfalls."""
    a = spec_assumptions(spec, assumptions or DEFAULT_ASSUMPTIONS)
    requested = spec.weight_dtype
    groups = group_nodes(spec.hardware.nodes)
    by_dtype, chosen = candidates_by_dtype(spec, a, groups)
    cands, small_reason = prefer_small_replicas(
        spec, by_dtype[chosen], a, lambda c: with_serving(spec, c, a)
    )
    for i in simulated_indexes(cands):
        if cands[i].serving is None:  # prefer_small_replicas may have simulated it already
            cands[i] = with_serving(spec, cands[i], a)
    best = cands[0]
    fill_quantization_options(spec, a, groups, by_dtype, best)
    group = next(g for g in groups if g.gpu_slug == best.gpu)
    used_nodes = nodes_of(group, best)
    spec = with_pool_kind_of(spec, used_nodes)

    signals = evaluate_signals(spec, best, len(used_nodes))
    route = choose_route(spec, best, signals, len(used_nodes))
    backend, why_backend = choose_backend(spec, route)
    balancer = choose_balancer(route, best)

    reasons = [memory_rules_message(spec, best, a), *speed_rules_messages(spec, best, a)]
    if not spec.vllm_version_stated:
        reasons.append(message(Code.VLLM_VERSION_ASSUMED, vllm_version=spec.vllm_version))
    graph_rule = cuda_graph_rule_message(spec, best)
    if graph_rule is not None:
        reasons.append(graph_rule)
    fp16_rule = fp16_on_pre_ampere_message(spec, best)
    if fp16_rule is not None:
        reasons.append(fp16_rule)
    if small_reason is not None:
        reasons.append(small_reason)
    reasons += quantize_for_fewer_nodes(spec, best, chosen, by_dtype)
    reasons += explain(
        spec,
        Ranking(best=best, candidates=cands, chosen_dtype=chosen, by_dtype=by_dtype),
        Deployment(
            route=route,
            backend=backend,
            why_backend=why_backend,
            balancer=balancer,
            signals=signals,
            nodes_used=len(used_nodes),
        ),
        a,
    )
    pinned = None
    if spec.pinned is not None:
        pinned, pinned_reason = evaluate_pinned(spec, group, cands, best, chosen, a)
        reasons.append(pinned_reason)

    rec = Recommendation(
        route=route,
        tp=best.tp,
        pp=best.pp,
        replicas=best.replicas,
        nodes_per_replica=best.nodes_per_replica,
        weight_dtype=chosen,
        executor_backend=backend,
        balancer=balancer,
        candidate_id=best.id,
        summary=recommendation_summary(
            spec, best, chosen, route=route, backend=backend, balancer=balancer
        ),
        reasons=tuple(reasons),
    )
    return PlanResult(
        recommendation=rec,
        candidates=tuple(cands),
        pinned=pinned,
        quantization_options=tuple(
            quantization_option(d, by_dtype[d]) for d in (requested, *QUANT_LADDER[requested])
        ),
        signals=tuple(signals),
        placement=recommendation_placement(spec, group, best, used_nodes, pinned, backend),
        configs=_configs(spec, best, group, route, backend),
        pitfalls=tuple(
            check_pitfalls(
                spec,
                best,
                used_nodes or list(group.nodes[:1]),
                route=route,
                backend=backend,
                comm_ms=ranked(best.comm_per_decode_step_ms),
                a=a,
            )
        ),
        assumptions=a.to_dict(),
        network=network_summary(spec, group, len(used_nodes), a, ring=best.tp),
        model=model_summary(spec, chosen),
        node_selection=NodeSelection(
            gpu=best.gpu,
            nodes_offered=len(spec.hardware.nodes),
            nodes_used=len(used_nodes),
            hosts=tuple(sorted({h for hosts in best.hosts for h in hosts})),
        ),
        memory_rules=memory_rules_applied(
            spec.vllm_version,
            group.nodes[0].gpu.vendor,
            moe=spec.architecture.is_moe,
            gpu_slug=group.nodes[0].gpu.slug,
        ),
    )


def with_pool_kind_of(spec: PlanSpec, used: list[Node]) -> PlanSpec:
    """Return `spec` with the pool kind of the nodes the plan uses, when nodes state their own.

    Offered nodes of several pools (a dedicated A800 pair beside a shared A100 pool) each carry
    their pool's kind; the choice of layout does not depend on it, while the executor, the
    placement group and the pitfalls depend on the kind of the nodes chosen: shared when any
    of them is.
    """
    if not used or all(n.pool_kind is None for n in spec.hardware.nodes):
        return spec
    kinds = {n.pool_kind or spec.hardware.pool_kind for n in used}
    kind = "shared" if "shared" in kinds else "dedicated"
    return replace(spec, hardware=replace(spec.hardware, pool_kind=kind))
