"""Which candidates the serving model simulates, and their prediction under the workload."""

from __future__ import annotations

from dataclasses import replace

from planner.engine.assumptions import Assumptions
from planner.engine.messages import Code, message
from planner.engine.result import Candidate
from planner.engine.serving import predict
from planner.engine.serving.bands import band_for, regime
from planner.engine.serving.kernels import gpu_generation
from planner.engine.spec import PlanSpec
from planner.engine.step_backend import StepBackend

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
