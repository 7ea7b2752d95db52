"""Each model's candidate layouts on the pool: one GPU type, TP inside a node, R replicas.

An option is what the placement chooses between: `tp` GPUs per instance on one node of the GPU
type `gpu`, `replicas` instances, the fewest that hold the model's load and meet its SLOs in the
engine's steady state (the ranking basis of single-model plans too). When no replica count meets
the SLOs, the count that holds the load is kept as an option that misses them, so a model is
still served, and said to miss, rather than dropped.

When the pool lets small models share GPUs, a model whose single-GPU instance fits in half its
memory share also gets a *shared* option: TP 1 instances at half the model's
gpu_memory_utilization (0.45 of 0.9), two models' instances per GPU at most, each predicted
with half the GPU's time (both instances busy, the case to plan for: without MPS two processes
time-slice the GPU). vLLM's gpu_memory_utilization is a per-instance limit, so two instances
at 0.45 fit one GPU side by side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from planner.engine.assumptions import Assumptions
from planner.engine.layouts import NodeGroup, evaluate
from planner.engine.result import Candidate
from planner.engine.spec import Layout, PlanSpec, valid_tp_sizes

# A shared GPU holds this many instances; each gets that fraction of its time (and Ray's num_gpus).
INSTANCES_PER_SHARED_GPU = 2
SHARED_GPU_FRACTION = 1 / INSTANCES_PER_SHARED_GPU


@dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    """One layout of one model: `replicas` instances of TP`tp` on `gpu` nodes."""

    model: str
    gpu: str
    tp: int
    replicas: int
    slo_met: bool
    # How far the model's load can grow before this option stops holding it or its SLOs
    # (1.0: it is at its limit now); the model with the smallest is the first to hurt.
    growth_headroom: float
    candidate: Candidate
    shared: bool = False  # TP 1 instances that each take half a GPU beside another model's

    @property
    def gpus(self) -> int:
        """Return the GPUs its instances run on (a shared instance's GPU counts once for it)."""
        return self.tp * self.replicas


def shared_inputs(spec: PlanSpec, a: Assumptions) -> tuple[PlanSpec, Assumptions]:
    """Return the spec and assumptions of an instance that shares its GPU with another model's:
    its memory share and the GPU's time divided between the two."""
    return (
        replace(spec, gpu_memory_utilization=option_utilization(spec, shared=True)),
        replace(a, gpu_time_share=a.gpu_time_share * SHARED_GPU_FRACTION),
    )


def option_utilization(spec: PlanSpec, *, shared: bool) -> float:
    """Return the gpu_memory_utilization of the model's instances (shared: half of its own)."""
    if shared:
        return round(spec.gpu_memory_utilization / INSTANCES_PER_SHARED_GPU, 3)
    return spec.gpu_memory_utilization


def option_inputs(spec: PlanSpec, option: Option, a: Assumptions) -> tuple[PlanSpec, Assumptions]:
    """Return the spec and assumptions `option` was evaluated with."""
    return shared_inputs(spec, a) if option.shared else (spec, a)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rejection:
    """A GPU type and TP whose memory cannot hold the model: it never starts there."""

    gpu: str
    tp: int
    candidate: Candidate


def _meets_slo(spec: PlanSpec, cand: Candidate) -> bool:
    wl = spec.workload
    if cand.ttft_ms is None or cand.itl_ms is None:
        return False
    if wl.ttft_slo_ms is not None and cand.ttft_ms > wl.ttft_slo_ms:
        return False
    return wl.itl_slo_ms is None or cand.itl_ms <= wl.itl_slo_ms


def _holds(spec: PlanSpec, cand: Candidate) -> bool:
    return cand.max_concurrency_total + 1e-9 >= spec.workload.concurrency


def _evaluate(
    spec: PlanSpec, group: NodeGroup, tp: int, replicas: int, a: Assumptions
) -> Candidate | None:
    return evaluate(
        spec,
        group,
        Layout(tp=tp, pp=1, replicas=replicas),
        dtype=spec.weight_dtype,
        a=a,
        pinned=True,
    )


def _growth(spec: PlanSpec, cand: Candidate, slo_met: bool) -> float:
    """Return the factor the load may grow by before the option runs out of KV or SLO."""
    kv = cand.max_concurrency_total / max(spec.workload.concurrency, 1e-9)
    if not slo_met:
        return min(kv, 1.0)
    wl = spec.workload
    margins = [kv]
    # TTFT and ITL grow about linearly with the batch a replica runs in the steady state.
    if wl.ttft_slo_ms is not None and cand.ttft_ms:
        margins.append(wl.ttft_slo_ms / cand.ttft_ms)
    if wl.itl_slo_ms is not None and cand.itl_ms:
        margins.append(wl.itl_slo_ms / cand.itl_ms)
    return round(min(margins), 3)


def replicas_for_load(spec: PlanSpec, first: Candidate) -> int:
    """Return the replicas whose KV cache holds the model's concurrency."""
    per_replica = max(first.max_concurrency_per_replica, 1e-9)
    return max(1, math.ceil(spec.workload.concurrency / per_replica))


def _fewest_replicas(
    spec: PlanSpec, group: NodeGroup, tp: int, first: Candidate, most: int, a: Assumptions
) -> tuple[int, Candidate, bool] | None:
    """Return the fewest replicas (<= most) that hold the load, and meet the SLOs if any do.

    More replicas lower each one's batch, so meeting the SLOs is monotone in the count: a
    binary search asks the engine O(log n) times even on a 64-GPU pool. When the pool's GPUs
    cannot hold the whole load, every replica they can hold is offered, marked as missing.
    """
    if most < 1:
        return None
    need = replicas_for_load(spec, first)
    if need > most:
        at_most = first if most == 1 else _evaluate(spec, group, tp, most, a)
        return None if at_most is None else (most, at_most, False)
    at_need = first if need == 1 else _evaluate(spec, group, tp, need, a)
    if at_need is None:
        return None
    if _meets_slo(spec, at_need):
        return need, at_need, True
    top = _evaluate(spec, group, tp, most, a)
    if top is None or not _meets_slo(spec, top):
        return need, at_need, False
    lo, hi, best = need, most, top  # lo misses, hi meets
    while hi - lo > 1:
        mid = (lo + hi) // 2
        cand = _evaluate(spec, group, tp, mid, a)
        if cand is not None and _meets_slo(spec, cand):
            hi, best = mid, cand
        else:
            lo = mid
    return hi, best, True


def _option(
    name: str,
    spec: PlanSpec,
    group: NodeGroup,
    found: tuple[int, Candidate, bool],
    *,
    shared: bool = False,
) -> Option:
    replicas, cand, met = found
    return Option(
        model=name,
        gpu=group.gpu_slug,
        tp=cand.tp,
        replicas=replicas,
        slo_met=met,
        growth_headroom=_growth(spec, cand, met),
        candidate=cand,
        shared=shared,
    )


def _most_replicas(group: NodeGroup, tp: int) -> int:
    return sum(u // tp for u in group.usable)


def option_at(
    name: str,
    spec: PlanSpec,
    group: NodeGroup,
    tp: int,
    replicas: int,
    a: Assumptions,
    *,
    shared: bool = False,
) -> Option | None:
    """Return the option of `replicas` instances of TP`tp` (shared: half-GPU instances, given
    the model's own spec and assumptions), or None past the group's GPUs."""
    if shared:
        spec, a = shared_inputs(spec, a)
    if replicas > _most_replicas(group, tp):
        return None
    cand = _evaluate(spec, group, tp, replicas, a)
    if cand is None or cand.output_throughput_tok_s is None:
        return None
    met = _meets_slo(spec, cand) and _holds(spec, cand)
    return _option(name, spec, group, (replicas, cand, met), shared=shared)


def model_options(
    name: str,
    spec: PlanSpec,
    groups: list[NodeGroup],
    a: Assumptions,
    *,
    share_gpus: bool = False,
) -> tuple[list[Option], list[Rejection]]:
    """Return the model's options on every GPU type of the pool, and the layouts that cannot fit.

    With `share_gpus`, a model small enough for half a GPU also gets its shared option.
    """
    options: list[Option] = []
    rejections: list[Rejection] = []
    pinned = spec.pinned
    for group in groups:
        per_node = group.gpus_per_node
        sizes = [pinned.tp] if pinned is not None else valid_tp_sizes(spec.architecture, per_node)
        for tp in sizes:
            if tp > per_node or per_node % tp:
                continue  # a TP group stays inside one node, in aligned blocks (gpus.py)
            first = _evaluate(spec, group, tp, 1, a)
            if first is None:
                continue
            if first.output_throughput_tok_s is None:  # its memory does not fit: never starts
                rejections.append(Rejection(gpu=group.gpu_slug, tp=tp, candidate=first))
                continue
            if pinned is not None:  # the user's replica count, as it is
                option = option_at(name, spec, group, tp, pinned.replicas, a)
                options += [option] if option is not None else []
                continue
            found = _fewest_replicas(spec, group, tp, first, _most_replicas(group, tp), a)
            if found is not None:
                options.append(_option(name, spec, group, found))
                options += _fewer_replicas(name, spec, group, found, first, a)
        if share_gpus and (pinned is None or pinned.tp == 1):
            options += _shared_options(name, spec, group, a)
    return options, rejections


def _shared_options(name: str, spec: PlanSpec, group: NodeGroup, a: Assumptions) -> list[Option]:
    """Return the model's half-GPU options on the group, or none when it is not small enough
    (its single-GPU instance does not fit in half its memory share)."""
    if 1 not in valid_tp_sizes(spec.architecture, group.gpus_per_node):
        return []
    pinned = spec.pinned
    if pinned is not None:
        option = option_at(name, spec, group, 1, pinned.replicas, a, shared=True)
        return [option] if option is not None else []
    spec, a = shared_inputs(spec, a)
    first = _evaluate(spec, group, 1, 1, a)
    if first is None or first.output_throughput_tok_s is None:
        return []
    # Each instance of a model takes a GPU of its own (beside another model's): at most one
    # instance per GPU of the group.
    found = _fewest_replicas(spec, group, 1, first, _most_replicas(group, 1), a)
    if found is None:
        return []
    return [
        _option(name, spec, group, found, shared=True),
        *_fewer_replicas(name, spec, group, found, first, a, shared=True),
    ]


def _fewer_replicas(
    name: str,
    spec: PlanSpec,
    group: NodeGroup,
    found: tuple[int, Candidate, bool],
    first: Candidate,
    a: Assumptions,
    *,
    shared: bool = False,
) -> list[Option]:
    """Return options with fewer replicas than the load needs, marked as missing it.

    Without them a model whose full layout takes the GPUs two others need is left unplaced
    where serving part of its load, said to miss, is the better answer (a priority-8 model
    against two of priority 5 and 3 would tie, and the solver could drop either side). Two
    counts keep the program small: one replica fewer, and half.
    """
    replicas = found[0]
    out = []
    for fewer in sorted({replicas - 1, math.ceil(replicas / 2)} - {0, replicas}):
        cand = first if fewer == 1 else _evaluate(spec, group, found[1].tp, fewer, a)
        if cand is not None and cand.output_throughput_tok_s is not None:
            out.append(_option(name, spec, group, (fewer, cand, False), shared=shared))
    return out
