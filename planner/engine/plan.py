"""The single entry of the engine: plan(spec) -> PlanResult (DOMAIN.md §3 decision order)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from catalog.architecture import parameter_breakdown
from catalog.data import GpuVendor
from planner.engine.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from planner.engine.configs import build_configs, empty_configs
from planner.engine.layouts import (
    NodeGroup,
    enumerate_candidates,
    group_nodes,
    score_candidates,
    spec_assumptions,
)
from planner.engine.memory import default_batched_tokens, kv_bytes_per_token
from planner.engine.messages import Code, Message, Term, message
from planner.engine.network import Link, domain_example, inter_node_link, intra_node_link
from planner.engine.pinned import evaluate_pin
from planner.engine.pitfalls import check_pitfalls
from planner.engine.placement import plan_placement
from planner.engine.profiling import CudaGraphRule, profiling_rules
from planner.engine.reasons import (
    QUANT_LADDER,
    Deployment,
    Ranking,
    explain,
    quantize_for_fewer_nodes,
)
from planner.engine.result import (
    Backend,
    Balancer,
    Candidate,
    LinkSummary,
    MemoryRules,
    ModelSummary,
    NetworkSummary,
    NodeSelection,
    Placement,
    PlanResult,
    QuantizationOption,
    Recommendation,
    Route,
    Signal,
    ranked,
)
from planner.engine.serving import predict
from planner.engine.serving.bands import band_for, regime
from planner.engine.serving.kernels import gpu_generation
from planner.engine.shown import shown_tok_s, shown_tpot_ms, shown_ttft_ms
from planner.engine.signals import evaluate_signals, wants_route_c
from planner.engine.spec import Node, PlanSpec
from planner.engine.step_backend import StepBackend
from planner.engine.vllm_flags import VLLM_VERSION


def _hosts(names: set[str]) -> str | Message:
    """Return the machines a recommendation uses: four named, then how many more."""
    hosts = sorted(names)
    shown = ", ".join(hosts[:4])
    return (
        shown if len(hosts) <= 4 else message(Code.HOSTS_AND_MORE, hosts=shown, more=len(hosts) - 4)
    )


def _r(x: float, nd: int = 1) -> float:
    return round(x, nd)


def _run(
    spec: PlanSpec,
    dtype: str,
    a: Assumptions,
    groups: list[NodeGroup],
    only_gpu: str | None = None,
) -> list[Candidate]:
    cands: list[Candidate] = []
    for group in groups:
        if only_gpu is not None and group.gpu_slug != only_gpu:
            continue
        cands += enumerate_candidates(spec, group, dtype=dtype, a=a)
    return score_candidates(spec, cands)


SIMULATED_CANDIDATES = 2  # the recommendation and the runner-up are simulated, not just ranked


def simulated_indexes(cands: list[Candidate]) -> set[int]:
    """Return the candidates the serving model simulates: the first two, and every layout a
    page names beside the recommendation (the leading one inside a node and across nodes,
    the runner-up of another TP×PP). Their shown speeds are all the serving model's; the
    closed-form figures of the others only rank them (simulating all of them costs seconds).
    """
    chosen = set(range(min(SIMULATED_CANDIDATES, len(cands))))
    fitting = [(i, c) for i, c in enumerate(cands) if c.fits]
    for spans in (False, True):
        chosen.update(next(([i] for i, c in fitting if c.spans_nodes == spans), []))
    if fitting:
        best = cands[0]
        others = (i for i, c in fitting if (c.tp, c.pp) != (best.tp, best.pp))
        chosen.update(next(([i] for i in others), []))
    return chosen


def with_serving(spec: PlanSpec, cand: Candidate, a: Assumptions) -> Candidate:
    """Return `cand` with the serving model's simulated prediction under the spec's workload."""
    ctx = cand.serving_context
    if ctx is None or not cand.fits:
        return cand
    log = ctx.kernels.fallbacks if ctx.kernels is not None else None
    before = log.steps if log is not None else 0
    prediction = predict(
        ctx,
        spec.workload,
        replicas=cand.replicas,
        balancer_efficiency=a.balancer_efficiency,
        band=band_for(serving_regime(spec, cand)),
    )
    notice = None
    if ctx.backend.used is not ctx.backend.requested:
        notice = message(Code.STEP_BACKEND_UNCOVERED, reason=ctx.backend.note)
    elif log is not None and log.steps > before:
        notice = message(Code.STEP_BACKEND_FALLBACK, steps=log.steps - before, reason=log.reason)
    return replace(cand, serving=replace(prediction, step_backend_notice=notice))


def serving_regime(spec: PlanSpec, cand: Candidate) -> str:
    """Return the calibration regime of a candidate's prediction (serving/bands.py)."""
    gpu = next(n.gpu for n in spec.hardware.nodes if n.gpu.slug == cand.gpu)
    ctx = cand.serving_context
    return regime(
        generation=gpu_generation(gpu.slug, gpu.fp8_support),
        moe=spec.architecture.is_moe,
        dtype=cand.weight_dtype,
        arrival=spec.workload.arrival,
        backend=(ctx.backend.used if ctx else StepBackend.ROOFLINE).value,
    )


def _link_summary(link: Link) -> LinkSummary:
    return LinkSummary(
        label=link.label, bandwidth_gbs=link.bandwidth_gbs, latency_us=link.latency_us
    )


def _quant_option(dtype: str, cands: list[Candidate]) -> QuantizationOption:
    one_node = [c for c in cands if c.nodes_per_replica == 1]
    pick = max(one_node or cands, key=lambda c: (c.fits, c.kv_tokens_per_replica, -c.tp))
    return QuantizationOption(
        weight_dtype=dtype,
        layout=pick.label,
        weights_gib_per_gpu=pick.memory.weights_gib,
        weights_gib_total=pick.memory.weights_gib * pick.gpus_per_replica,
        kv_tokens_per_replica=pick.kv_tokens_per_replica,
        max_concurrency_per_replica=pick.max_concurrency_per_replica,
        fits_one_node=pick.fits,
        serves_load=pick.serves_load,
    )


def _candidates_by_dtype(
    spec: PlanSpec, a: Assumptions, groups: list[NodeGroup]
) -> tuple[dict[str, list[Candidate]], str]:
    """Return the candidates per weight dtype tried, and the dtype chosen.

    The requested dtype is tried first; when nothing fits, the quantization ladder is walked
    down until a dtype fits (or the ladder ends: the requested dtype stays chosen).
    """
    requested = spec.weight_dtype
    by_dtype: dict[str, list[Candidate]] = {requested: _run(spec, requested, a, groups)}
    if any(c.fits for c in by_dtype[requested]):
        return by_dtype, requested
    for dtype in QUANT_LADDER[requested]:
        by_dtype[dtype] = _run(spec, dtype, a, groups)
        if any(c.fits for c in by_dtype[dtype]):
            return by_dtype, dtype
    return by_dtype, requested


def _fill_quantization_options(
    spec: PlanSpec,
    a: Assumptions,
    groups: list[NodeGroup],
    by_dtype: dict[str, list[Candidate]],
    best: Candidate,
) -> None:
    """Evaluate the ladder's dtypes not tried yet, on the chosen GPU type only (they are shown)."""
    for dtype in QUANT_LADDER[spec.weight_dtype]:
        if dtype not in by_dtype:
            by_dtype[dtype] = _run(spec, dtype, a, groups, only_gpu=best.gpu)


def _nodes_of(group: NodeGroup, cand: Candidate) -> list[Node]:
    """Return the nodes of `group` that host a replica of `cand`, best first."""
    names = {h for hosts in cand.hosts for h in hosts}
    return [n for n in group.nodes if n.hostname in names]


def _evaluate_pinned(
    spec: PlanSpec,
    group: NodeGroup,
    cands: list[Candidate],
    best: Candidate,
    chosen: str,
    a: Assumptions,
) -> tuple[Candidate, Message]:
    """Return the user's pinned layout evaluated beside the candidates, and the reason about it.

    A pinned layout keeps the weight dtype the user asked for: it is never quantized behind
    their back; when it does not fit at that dtype, the verdict says so and why.
    """
    assert spec.pinned is not None
    requested = spec.weight_dtype
    pinned_c = evaluate_pin(spec, group, spec.pinned, dtype=requested, a=a)
    scored = score_candidates(spec, [*cands, pinned_c])
    pinned = with_serving(spec, next(c for c in scored if c.pinned), a)
    layout = {"tp": spec.pinned.tp, "pp": spec.pinned.pp, "replicas": spec.pinned.replicas}
    verdict = _pinned_verdict(pinned, requested, chosen)
    if pinned.output_throughput_tok_s is None:
        return pinned, message(Code.PINNED_LAYOUT_NO_SPEED, **layout, verdict=verdict)
    return pinned, message(
        Code.PINNED_LAYOUT,
        **layout,
        verdict=verdict,
        throughput_tok_s=_r(shown_tok_s(pinned) or 0.0, 0),
        best_tok_s=_r(shown_tok_s(best) or 0.0, 0),
        score=pinned.score,
        best_score=best.score,
    )


def _placement(
    spec: PlanSpec,
    group: NodeGroup,
    best: Candidate,
    used_nodes: list[Node],
    pinned: Candidate | None,
    backend: Backend,
) -> Placement:
    """Return the placement of the recommendation, with the pinned layout's beside it."""
    placement = plan_placement(
        best,
        used_nodes or list(group.nodes[:2]),
        required=backend == Backend.RAY or spec.hardware.pool_kind == "shared",
    )
    if pinned is None:
        return placement
    pinned_nodes = _nodes_of(group, pinned)
    return replace(
        placement,
        pinned=plan_placement(
            pinned,
            pinned_nodes or list(group.nodes[: pinned.nodes_per_replica]),
            required=spec.hardware.pool_kind == "shared",
        ),
    )


def _configs(
    spec: PlanSpec, best: Candidate, group: NodeGroup, route: Route, backend: Backend
) -> dict[str, Any]:
    """Return the deployment files of the route; none when nothing fits."""
    if route == Route.NONE:
        return {"vllm_version": VLLM_VERSION, **empty_configs()}
    return build_configs(spec, best, group.nodes, route=route, backend=backend)


_ROUTE_CODES = {
    Route.SINGLE: Code.ROUTE_SINGLE,
    Route.A: Code.ROUTE_A,
    Route.B: Code.ROUTE_B,
    Route.C: Code.ROUTE_C,
}


def _summary(
    spec: PlanSpec,
    best: Candidate,
    chosen: str,
    *,
    route: Route,
    backend: Backend,
    balancer: Balancer,
) -> Message:
    """Return the recommendation in one sentence (or that nothing fits)."""
    if route == Route.NONE:
        return message(
            Code.SUMMARY_NOTHING_FITS,
            model=spec.model_name,
            max_model_len=spec.max_model_len,
            gpu=best.gpu,
            dtype=chosen,
        )
    return summary_message(
        best,
        model_name=spec.model_name,
        max_model_len=spec.max_model_len,
        concurrency=spec.workload.concurrency,
        recommendation=(route, chosen, backend, balancer),
    )


def summary_message(
    best: Candidate,
    *,
    model_name: str,
    max_model_len: int,
    concurrency: int,
    recommendation: tuple[Route, str, Backend, Balancer],
) -> Message:
    """Return the sentence of a recommendation (route, dtype, backend, balancer) that fits.

    Also what a plan saved before messages were codes gets in place of its English summary,
    from its stored figures and the concurrency it was asked for.
    """
    route, dtype, backend, balancer = recommendation
    return message(
        Code.SUMMARY,
        route=message(_ROUTE_CODES[route]),
        model=model_name,
        dtype=dtype,
        tp=best.tp,
        pp=best.pp,
        replicas=best.replicas,
        gpu=best.gpu,
        hosts=_hosts({h for hosts in best.hosts for h in hosts}),
        kv_tokens=best.kv_tokens_per_replica,
        max_concurrency=_r(best.max_concurrency_per_replica),
        max_model_len=max_model_len,
        throughput_tok_s=_r(shown_tok_s(best) or 0.0, 0),
        concurrency=concurrency,
        ttft_ms=_r(shown_ttft_ms(best) or 0.0, 0),
        itl_ms=_r(shown_tpot_ms(best) or 0.0),
        backend=backend.value,
        # No balancer is a word to translate; a balancer's name is shown as it is.
        balancer=Term.NONE if balancer == Balancer.NONE else balancer.value,
    )


def _network_summary(
    spec: PlanSpec, group: NodeGroup, nodes_used: int, a: Assumptions
) -> NetworkSummary:
    """Return the links inside and between the chosen GPU type's nodes, and the §2 example."""
    intra = intra_node_link(group.nodes[0], a, spec.network)
    inter = inter_node_link(list(group.nodes[: max(2, nodes_used)]), a, spec.network)
    return NetworkSummary(
        intra_node=_link_summary(intra),
        inter_node=_link_summary(inter),
        overlap_factor=a.overlap_factor,
        domain_example_ms=domain_example(a),
    )


def _model_summary(spec: PlanSpec, chosen: str) -> ModelSummary:
    """Return the model's size and the weight dtype asked for and chosen."""
    arch = spec.architecture
    pb = parameter_breakdown(arch)
    return ModelSummary(
        name=spec.model_name,
        hf_repo=spec.hf_repo,
        slug=spec.model_slug,
        total_params=pb.total,
        active_params=pb.active,
        requested_weight_dtype=spec.weight_dtype,
        weight_dtype=chosen,
        kv_bytes_per_token_full_model=kv_bytes_per_token(
            arch, 1, arch.num_layers, spec.kv_cache_dtype
        ),
        max_model_len=spec.max_model_len,
    )


def plan(spec: PlanSpec, assumptions: Assumptions | None = None) -> PlanResult:
    """Return the recommendation, every candidate layout, signals, placement, configs, pitfalls."""
    a = spec_assumptions(spec, assumptions or DEFAULT_ASSUMPTIONS)
    requested = spec.weight_dtype
    groups = group_nodes(spec.hardware.nodes)
    by_dtype, chosen = _candidates_by_dtype(spec, a, groups)
    cands, small_reason = prefer_small_replicas(spec, by_dtype[chosen], a)
    for i in simulated_indexes(cands):
        cands[i] = with_serving(spec, cands[i], a)
    best = cands[0]
    _fill_quantization_options(spec, a, groups, by_dtype, best)
    group = next(g for g in groups if g.gpu_slug == best.gpu)
    used_nodes = _nodes_of(group, best)
    spec = with_pool_kind_of(spec, used_nodes)

    signals = evaluate_signals(spec, best, len(used_nodes))
    route = _route(spec, best, signals, len(used_nodes))
    backend, why_backend = _backend(spec, route)
    balancer = _balancer(route, best)

    reasons = [memory_rules_message(spec, best, a)]
    if not spec.vllm_version_stated:
        reasons.append(message(Code.VLLM_VERSION_ASSUMED, vllm_version=spec.vllm_version))
    graph_rule = cuda_graph_rule_message(spec, best)
    if graph_rule is not None:
        reasons.append(graph_rule)
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
        pinned, pinned_reason = _evaluate_pinned(spec, group, cands, best, chosen, a)
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
        summary=_summary(spec, best, chosen, route=route, backend=backend, balancer=balancer),
        reasons=tuple(reasons),
    )
    return PlanResult(
        recommendation=rec,
        candidates=tuple(cands),
        pinned=pinned,
        quantization_options=tuple(
            _quant_option(d, by_dtype[d]) for d in (requested, *QUANT_LADDER[requested])
        ),
        signals=tuple(signals),
        placement=_placement(spec, group, best, used_nodes, pinned, backend),
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
        network=_network_summary(spec, group, len(used_nodes), a),
        model=_model_summary(spec, chosen),
        node_selection=NodeSelection(
            gpu=best.gpu,
            nodes_offered=len(spec.hardware.nodes),
            nodes_used=len(used_nodes),
            hosts=tuple(sorted({h for hosts in best.hosts for h in hosts})),
        ),
        memory_rules=memory_rules_applied(
            spec.vllm_version, group.nodes[0].gpu.vendor, moe=spec.architecture.is_moe
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


def _pinned_verdict(pinned: Candidate, requested: str, chosen: str) -> Message:
    """Return what became of the user's pinned layout, judged at the dtype they asked for."""
    memory_fits = pinned.output_throughput_tok_s is not None
    if memory_fits and not pinned.placeable and pinned.placement_reason and pinned.placement_hint:
        return message(
            Code.PINNED_NOT_PLACEABLE, reason=pinned.placement_reason, hint=pinned.placement_hint
        )
    if not pinned.fits:
        reason = pinned.rejected_reason or message(Code.REJECT_MEMORY)
        if requested != chosen:
            return message(Code.PINNED_NO_FIT_AT_DTYPE, dtype=requested, reason=reason)
        return message(Code.PINNED_NO_FIT, reason=reason)
    if not pinned.serves_load:
        return message(Code.PINNED_SHORT_OF_LOAD)
    return message(Code.PINNED_FITS)


def _route(spec: PlanSpec, best: Candidate, signals: list[Signal], nodes_used: int) -> Route:
    """Return the route of DOMAIN.md §3: nothing fits, span nodes (B), a Ray pool (C), else A."""
    if not best.fits:
        return Route.NONE
    if best.spans_nodes:
        return Route.B
    if wants_route_c(signals) and (nodes_used > 1 or spec.operations.multi_model_pool):
        return Route.C
    return Route.SINGLE if best.replicas == 1 else Route.A


def _backend(spec: PlanSpec, route: Route) -> tuple[Backend, Message]:
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


def _balancer(route: Route, best: Candidate) -> Balancer:
    """Return what spreads requests over the replicas."""
    if route == Route.C:
        return Balancer.RAY_SERVE
    if route != Route.NONE and best.replicas > 1:
        return Balancer.NGINX
    return Balancer.NONE


def memory_rules_applied(
    vllm_version: str, vendor: GpuVendor = GpuVendor.NVIDIA, *, moe: bool = False
) -> MemoryRules:
    """Return which vLLM version's memory-profiling rules the plan followed on `vendor` GPUs."""
    rules = profiling_rules(vllm_version, vendor, moe=moe)
    return MemoryRules(
        vllm_version=rules.version,
        engine=rules.engine,
        cuda_graphs_subtracted=rules.subtract_cuda_graphs,
        full_length_prefill=rules.full_length_prefill,
        description=rules.description,
    )


def cuda_graph_rule_message(spec: PlanSpec, best: Candidate) -> Message | None:
    """Return why vLLM subtracts no CUDA-graph estimate where 0.21 on would, else None."""
    gpu = next(n.gpu for n in spec.hardware.nodes if n.gpu.slug == best.gpu)
    rules = profiling_rules(spec.vllm_version, gpu.vendor, moe=spec.architecture.is_moe)
    if rules.cuda_graph_rule == CudaGraphRule.SKIPPED_PLATFORM:
        return message(
            Code.CUDA_GRAPHS_SKIPPED_PLATFORM, vllm_version=rules.version, vendor=str(gpu.vendor)
        )
    if rules.cuda_graph_rule == CudaGraphRule.RUNNER_V2_ZERO:
        return message(Code.CUDA_GRAPHS_RUNNER_V2, vllm_version=rules.version)
    return None


def memory_rules_message(spec: PlanSpec, best: Candidate, a: Assumptions) -> Message:
    """Return the reason that names the profiling rules behind the KV figures."""
    first = next(n for n in spec.hardware.nodes if n.gpu.slug == best.gpu)
    rules = profiling_rules(spec.vllm_version, first.gpu.vendor, moe=spec.architecture.is_moe)
    tokens = spec.max_num_batched_tokens or default_batched_tokens(
        first.gpu.driver_visible_gib, first.gpu.slug, a
    )
    if rules.full_length_prefill:
        tokens = spec.max_model_len if spec.max_model_len <= 32768 else tokens
    return message(
        Code.MEMORY_RULES,
        vllm_version=rules.version,
        engine=rules.engine,
        cuda_graph_gib=_r(best.memory.cuda_graph_gib, 2),
        non_torch_gib=_r(best.memory.non_torch_gib, 2),
        profile_tokens=tokens,
    )


def prefer_small_replicas(
    spec: PlanSpec, cands: list[Candidate], a: Assumptions
) -> tuple[list[Candidate], Message | None]:
    """Put many TP1/TP2 replicas first when they serve the load nearly as fast (issue 13).

    A small model on a large fleet is best served by independent replicas inside nodes: no
    all-reduce per layer, more failure domains. A larger TP stays first only when the small
    replicas miss the load or an SLO, or reach less than `small_replica_min_share` of its
    output throughput; the reason says which.
    """
    if not cands or not cands[0].fits or cands[0].tp <= 2 or cands[0].spans_nodes:
        return cands, None
    best = cands[0]
    wl = spec.workload
    small = [
        c
        for c in cands
        if c.tp <= 2
        and c.pp == 1
        and c.fits
        and c.serves_load
        and not c.spans_nodes
        and not (wl.ttft_slo_ms is not None and ranked(c.ttft_ms) > wl.ttft_slo_ms)
        and not (wl.itl_slo_ms is not None and ranked(c.itl_ms) > wl.itl_slo_ms)
    ]
    if not small:
        return cands, None
    pick = max(small, key=lambda c: (ranked(c.output_throughput_tok_s), c.replicas))
    share = ranked(pick.output_throughput_tok_s) / max(ranked(best.output_throughput_tok_s), 1e-9)
    params = {
        "tp": pick.tp,
        "larger_tp": best.tp,
        "share_pct": round(100 * share),
        "throughput_tok_s": _r(ranked(pick.output_throughput_tok_s), 0),
        "larger_tok_s": _r(ranked(best.output_throughput_tok_s), 0),
        "concurrency": wl.concurrency,
    }
    if share < a.small_replica_min_share:
        return cands, message(Code.LARGER_TP_WINS, **params)
    reordered = [pick, *(c for c in cands if c is not pick)]
    return reordered, message(
        Code.SMALL_MODEL_REPLICAS,
        replicas=pick.replicas,
        larger_replicas=best.replicas,
        **params,
    )
