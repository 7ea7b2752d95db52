"""One replica's speed at a given concurrency: what plan vs reality and calibration compare with.

A server seldom runs at the concurrency the plan assumed; comparing its throughput with the
plan's figure at another concurrency says nothing. This evaluates the plan's layout again at the
observed concurrency (and, when known, the observed request lengths). It is the single engine
call monitoring and calibration make. Means come from the serving model's steady state (what the
candidate ranking uses; cheap enough for a least-squares fit); with `percentiles` the serving
model's simulation of vLLM's scheduler adds the p95s that the servers' p95s are compared with.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.engine.assumptions import DEFAULT_ASSUMPTIONS, GIB, Assumptions
from planner.engine.layouts import NodeGroup, evaluate, group_nodes, spec_assumptions
from planner.engine.serving import predict
from planner.engine.spec import Hardware, Layout, PlanSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaLayout:
    """The layout of one replica as a plan chose it."""

    gpu: str
    tp: int
    pp: int
    weight_dtype: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ServingPoint:
    """Predicted figures of ONE replica at `concurrency_per_replica` running requests."""

    concurrency_per_replica: float
    output_tok_s: float
    ttft_ms: float  # mean (steady state)
    itl_ms: float  # mean (steady state)
    ttft_p95_ms: float | None  # simulated; None unless asked for
    itl_p95_ms: float | None
    kv_blocks: int  # per GPU of the stage that limits the KV cache (vLLM's num_gpu_blocks)
    kv_tokens: int
    kv_budget_gib: float  # per GPU
    kv_bytes_per_token: float  # per GPU, one logged KV token (every KV group)
    kv_groups: int  # vLLM's KV groups per GPU (1 unless layers mix attention kinds)

    def kv_gib_of(self, blocks: int, block_size_tokens: int) -> float:
        """Return the KV memory per GPU that `blocks` of vLLM's num_gpu_blocks hold, in GiB."""
        return blocks / self.kv_groups * block_size_tokens * self.kv_bytes_per_token / GIB


class LayoutUnavailable(ValueError):
    """The spec's hardware has no node group that can host the layout."""


def predict_replica(
    spec: PlanSpec,
    layout: ReplicaLayout,
    *,
    concurrency_per_replica: float,
    avg_input_tokens: float | None = None,
    avg_output_tokens: float | None = None,
    a: Assumptions = DEFAULT_ASSUMPTIONS,
    percentiles: bool = False,
) -> ServingPoint:
    """Return one replica's throughput, TTFT and ITL at the given concurrency."""
    workload = replace(
        spec.workload,
        # The engine's batch arithmetic is in floats: a mean of 12.4 running requests is kept.
        concurrency=max(concurrency_per_replica, 1e-6),  # type: ignore[arg-type]
        avg_input_tokens=max(1, round(avg_input_tokens or spec.workload.avg_input_tokens)),
        avg_output_tokens=max(1, round(avg_output_tokens or spec.workload.avg_output_tokens)),
    )
    return _evaluate(replace(spec, workload=workload), layout, a, percentiles)


# The node groups of the last few fleets, by identity: a calibration fit predicts every
# observation of one plan dozens of times, and grouping a 1,000-node fleet costs 1.6 ms each.
# The entry holds the Hardware itself, so its id cannot be reused while it is cached.
_GROUPS: dict[int, tuple[Hardware, tuple[NodeGroup, ...]]] = {}
_GROUPS_KEPT = 8


def _node_groups(hardware: Hardware) -> tuple[NodeGroup, ...]:
    hit = _GROUPS.get(id(hardware))
    if hit is not None and hit[0] is hardware:
        return hit[1]
    groups = tuple(group_nodes(hardware.nodes))
    if len(_GROUPS) >= _GROUPS_KEPT:
        _GROUPS.clear()  # simpler than an LRU, and safe when threads share the module
    _GROUPS[id(hardware)] = (hardware, groups)
    return groups


def _evaluate(
    spec: PlanSpec, layout: ReplicaLayout, a: Assumptions, percentiles: bool
) -> ServingPoint:
    group = next((g for g in _node_groups(spec.hardware) if g.gpu_slug == layout.gpu), None)
    if group is None:
        raise LayoutUnavailable(f"no {layout.gpu} nodes in the plan's hardware")
    cand = evaluate(
        spec,
        group,
        Layout(tp=layout.tp, pp=layout.pp, replicas=1),
        dtype=layout.weight_dtype,
        a=spec_assumptions(spec, a),
        pinned=True,
    )
    if cand is None:
        raise LayoutUnavailable(f"TP{layout.tp}×PP{layout.pp} does not fit {layout.gpu} nodes")
    if cand.output_throughput_tok_s is None or cand.ttft_ms is None or cand.itl_ms is None:
        raise LayoutUnavailable(
            f"TP{layout.tp}×PP{layout.pp} does not fit the memory of {layout.gpu} GPUs"
        )
    ttft_p95 = itl_p95 = None
    output = cand.output_throughput_tok_s
    if percentiles and cand.serving_context is not None:
        simulated = predict(cand.serving_context, spec.workload, replicas=1, scan=False)
        ttft_p95, itl_p95 = simulated.ttft_p95_ms, simulated.itl_p95_ms
        output = simulated.output_tok_s
    return ServingPoint(
        concurrency_per_replica=float(spec.workload.concurrency),
        output_tok_s=output,
        ttft_ms=cand.ttft_ms,
        itl_ms=cand.itl_ms,
        ttft_p95_ms=ttft_p95,
        itl_p95_ms=itl_p95,
        kv_blocks=cand.gpu_blocks(a.block_size_tokens),
        kv_tokens=cand.kv_tokens_per_replica,
        kv_budget_gib=cand.memory.kv_budget_gib,
        kv_bytes_per_token=cand.memory.kv_bytes_per_token,
        kv_groups=max(1, cand.memory.kv_groups),
    )
