"""plan_pool(spec) -> PoolResult: several models placed on one pool, each predicted at its load."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from planner.engine.assumptions import DEFAULT_ASSUMPTIONS, Assumptions
from planner.engine.layouts import NodeGroup, group_nodes, spec_assumptions
from planner.engine.messages import Code, message
from planner.engine.pool.gpus import lay_out
from planner.engine.pool.options import (
    Option,
    Rejection,
    model_options,
    option_at,
    option_inputs,
    option_utilization,
)
from planner.engine.pool.result import (
    FirstToHurt,
    InstancePlacement,
    PlacedModel,
    PoolResult,
    UnplacedModel,
    gpus_in_use,
)
from planner.engine.pool.route import pool_route
from planner.engine.pool.solve import Solution, place
from planner.engine.pool.spec import PoolModel, PoolSpec
from planner.engine.pool.unplaced import why_unplaced
from planner.engine.result import Candidate
from planner.engine.serving_choice import with_serving

# Each round simulates the chosen layouts; one that misses its SLO in the simulation is marked
# so, with one more replica offered, and the placement is solved again.
MAX_VERIFY_ROUNDS = 6


def _key(o: Option) -> tuple[str, str, int, int, bool]:
    return (o.model, o.gpu, o.tp, o.replicas, o.shared)


def _simulate(m: PoolModel, o: Option, base: Assumptions) -> Candidate:
    """Return the option's candidate with the serving model's prediction at the model's load."""
    spec, a = option_inputs(m.spec, o, spec_assumptions(m.spec, base))
    return with_serving(spec, o.candidate, a)


def _place_verified(
    spec: PoolSpec, groups: list[NodeGroup], options: list[Option], base: Assumptions
) -> tuple[Solution, dict[str, Candidate]]:
    """Return the placement whose chosen layouts meet their SLOs in the serving simulation.

    The options are ranked on the steady state's means (cheap, for every layout); the SLOs are
    p95s, which only the simulation gives, as on a single-model plan.
    """
    models = {m.name: m for m in spec.models}
    priorities = {m.name: m.priority for m in spec.models}
    simulated: dict[tuple[str, str, int, int, bool], Candidate] = {}
    solution = place(options, priorities, spec.hardware.nodes)
    for _ in range(MAX_VERIFY_ROUNDS):
        missed: list[Option] = []
        for name, chosen in solution.chosen.items():
            o, m = chosen.option, models[name]
            if _key(o) not in simulated:
                simulated[_key(o)] = _simulate(m, o, base)
            pred = simulated[_key(o)].serving
            if o.slo_met and pred is not None and pred.slo_met is False:
                missed.append(o)
        if not missed:
            break
        for o in missed:
            options = [replace(x, slo_met=False) if x is o else x for x in options]
            group = next(g for g in groups if g.gpu_slug == o.gpu)
            more = option_at(
                o.model,
                models[o.model].spec,
                group,
                o.tp,
                o.replicas + 1,
                spec_assumptions(models[o.model].spec, base),
                shared=o.shared,
            )
            if more is not None and _key(more) not in {_key(x) for x in options}:
                options.append(more)
        solution = place(options, priorities, spec.hardware.nodes)
    served = {}
    for name, chosen in solution.chosen.items():
        o, m = chosen.option, models[name]
        if _key(o) not in simulated:
            simulated[_key(o)] = _simulate(m, o, base)
        served[name] = simulated[_key(o)]
    return solution, served


def _placed(
    m: PoolModel, option: Option, cand: Candidate, instances: list[InstancePlacement]
) -> PlacedModel:
    prediction = cand.serving
    slo_met = option.slo_met
    if prediction is not None and prediction.slo_met is not None:
        slo_met = prediction.slo_met  # the simulation's p95s decide, as on a single plan
    if cand.max_concurrency_total + 1e-9 < m.spec.workload.concurrency:
        slo_met = False  # fewer replicas than its load needs: it serves part of it
    return PlacedModel(
        name=m.name,
        model=m.spec.hf_repo,
        priority=m.priority,
        gpu=option.gpu,
        weight_dtype=m.spec.weight_dtype,
        tp=option.tp,
        replicas=option.replicas,
        gpus=option.gpus,
        instances=tuple(sorted(instances, key=lambda i: (i.host, i.gpu_indices))),
        gpu_memory_utilization=option_utilization(m.spec, shared=option.shared),
        shares_gpus=option.shared,
        weights_gib_per_gpu=cand.memory.weights_gib,
        kv_tokens_per_replica=cand.kv_tokens_per_replica,
        max_concurrency_total=cand.max_concurrency_total,
        concurrency=float(m.spec.workload.concurrency),
        prediction=prediction,
        slo_met=slo_met,
        growth_headroom=option.growth_headroom,
    )


def _instances(spec: PoolSpec, solution: Solution) -> dict[str, list[InstancePlacement]]:
    """Return each placed model's instances with their GPU indices, node by node."""
    wanted: dict[str, list[tuple[str, int]]] = defaultdict(list)
    sharing: dict[str, list[str]] = defaultdict(list)
    for name, chosen in solution.chosen.items():
        for host, count in chosen.instances.items():
            if chosen.option.shared:
                sharing[host] += [name] * count
            else:
                wanted[host] += [(name, chosen.option.tp)] * count
    usable = {n.hostname: n.usable_gpus for n in spec.hardware.nodes}
    out: dict[str, list[InstancePlacement]] = defaultdict(list)
    for host in sorted(set(wanted) | set(sharing)):
        for inst in lay_out(host, usable[host], wanted[host], sharing[host]):
            out[inst.model].append(InstancePlacement(host=host, gpu_indices=inst.gpu_indices))
    return out


def _spare(spec: PoolSpec, placed: list[PlacedModel]) -> dict[str, int]:
    used: dict[str, int] = defaultdict(int)
    for host, _ in {(i.host, g) for m in placed for i in m.instances for g in i.gpu_indices}:
        used[host] += 1
    return {
        n.hostname: n.usable_gpus - used[n.hostname]
        for n in spec.hardware.nodes
        if n.usable_gpus - used[n.hostname] > 0
    }


def plan_pool(spec: PoolSpec, assumptions: Assumptions | None = None) -> PoolResult:
    """Return where every model of the pool runs, how fast, and which route serves them."""
    base = assumptions or DEFAULT_ASSUMPTIONS
    groups: list[NodeGroup] = group_nodes(spec.hardware.nodes)
    options: list[Option] = []
    rejections: dict[str, list[Rejection]] = {}
    for m in spec.models:
        own, rejected = model_options(
            m.name, m.spec, groups, spec_assumptions(m.spec, base), share_gpus=spec.share_gpus
        )
        options += own
        rejections[m.name] = rejected
    solution, served = _place_verified(spec, groups, options, base)
    instances = _instances(spec, solution)
    placed = [
        _placed(m, solution.chosen[m.name].option, served[m.name], instances[m.name])
        for m in spec.models
        if m.name in solution.chosen
    ]
    unplaced = [
        _unplaced(m, spec, groups, options, rejections[m.name], placed, base)
        for m in spec.models
        if m.name in solution.unplaced
    ]
    if unplaced and not spec.share_gpus:
        unplaced = _with_sharing_hints(spec, unplaced, base)
    hurt = min(placed, key=lambda p: (p.growth_headroom, -p.priority), default=None)
    return PoolResult(
        placed=tuple(placed),
        unplaced=tuple(unplaced),
        spare_gpus=_spare(spec, placed),
        first_to_hurt=None
        if hurt is None
        else FirstToHurt(name=hurt.name, growth_headroom=hurt.growth_headroom),
        route=pool_route(spec, placed),
        optimal=solution.optimal,
    )


def _with_sharing_hints(
    spec: PoolSpec, unplaced: list[UnplacedModel], base: Assumptions
) -> list[UnplacedModel]:
    """Return the unplaced models, each hinted to share GPUs when the same pool with sharing
    places it (the hint is checked by placing that pool)."""
    shared = plan_pool(replace(spec, share_gpus=True), base)
    out = []
    for u in unplaced:
        placed = shared.model(u.name)
        if placed is not None:
            hint = message(Code.POOL_HINT_SHARE, gpu=placed.gpu)
            u = replace(u, hints=(*u.hints, hint))
        out.append(u)
    return out


def _unplaced(
    m: PoolModel,
    spec: PoolSpec,
    groups: list[NodeGroup],
    options: list[Option],
    rejections: list[Rejection],
    placed: list[PlacedModel],
    base: Assumptions,
) -> UnplacedModel:
    reason, hints = why_unplaced(
        m,
        groups,
        own=[o for o in options if o.model == m.name],
        rejections=rejections,
        placed=placed,
        free_gpus=sum(n.usable_gpus for n in spec.hardware.nodes) - gpus_in_use(placed),
        a=spec_assumptions(m.spec, base),
    )
    return UnplacedModel(
        name=m.name, model=m.spec.hf_repo, priority=m.priority, reason=reason, hints=hints
    )
