"""Why the plan chose what it chose: the reasons of a recommendation (DOMAIN.md §3 order).

Each reason is one small function of what it needs; `explain` lists them in the order a reader
follows the decision: which nodes, which dtype, does it fit, replicas, layout, network, Ray.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planner.engine.assumptions import Assumptions
from planner.engine.memory import default_batched_tokens
from planner.engine.memory.room import SETTING_WOULD_START
from planner.engine.messages import Code, Message, Term, message
from planner.engine.result import Backend, Balancer, Candidate, CandidateKind, Route, Signal, ranked
from planner.engine.shown import shown_tok_s, shown_tpot_ms
from planner.engine.spec import Nic, PlanSpec

# Weight dtypes to try, in order, when the requested one does not fit.
QUANT_LADDER = {
    "fp32": ("bf16", "fp8", "int4"),
    "bf16": ("fp8", "int4"),
    "fp16": ("fp8", "int4"),
    "fp8": ("int4",),
    "int8": ("int4",),
    "int4": (),
    "mxfp4": (),
}


def _r(x: float, nd: int = 1) -> float:
    return round(x, nd)


@dataclass(frozen=True, slots=True, kw_only=True)
class Ranking:
    """The ranked layouts of the chosen weight dtype, and every dtype that was tried."""

    best: Candidate
    candidates: Sequence[Candidate]
    chosen_dtype: str
    by_dtype: Mapping[str, Sequence[Candidate]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Deployment:
    """How the best layout is run: route, executor, balancer, and the signals behind them."""

    route: Route
    backend: Backend
    why_backend: Message
    balancer: Balancer
    signals: Sequence[Signal]
    nodes_used: int


def explain(
    spec: PlanSpec, ranking: Ranking, deployment: Deployment, a: Assumptions
) -> list[Message]:
    """Return the reasons of the recommendation, in the order of DOMAIN.md §3."""
    best, cands = ranking.best, ranking.candidates
    out = [*node_selection(spec, best, deployment.nodes_used), *quantization(spec, ranking)]
    if not best.fits:
        if best.rejected_reason is not None and best.rejected_reason.code in SETTING_WOULD_START:
            why = message(
                Code.NOTHING_FITS_AS_SET,
                max_model_len=spec.max_model_len,
                reason=best.rejected_reason,
            )
            return [*out, why]
        return [*out, message(Code.NOTHING_FITS, max_model_len=spec.max_model_len)]
    out += fit(spec, best)
    out += replicas(spec, best, cands, deployment.balancer)
    out += layout_choice(spec, best, cands)
    out += cross_node_worse(spec, best, cands)
    if best.spans_nodes:
        out += spanning(spec, best, cands, a)
    out += chunked_prefill(spec, best, cands, a)
    out.append(ray_verdict(deployment, best))
    out.append(
        message(Code.EXECUTOR_BACKEND, backend=deployment.backend.value, why=deployment.why_backend)
    )
    out += load_and_slos(spec, best)
    if spec.workload.shared_prefixes:
        out.append(message(Code.SGLANG_PREFIX))
    return out


def _first_node_nic(spec: PlanSpec, best: Candidate) -> Nic | None:
    return next(n for n in spec.hardware.nodes if n.gpu.slug == best.gpu).data_nic


def _replica_nics(spec: PlanSpec, c: Candidate) -> list[Nic | None]:
    """Return the data NICs of the nodes of `c`'s first replica."""
    return [n.data_nic for n in spec.hardware.nodes if n.hostname in c.hosts[0]]


def node_selection(spec: PlanSpec, best: Candidate, nodes_used: int) -> list[Message]:
    """Return which of several offered nodes were chosen, and on what grounds."""
    if len(spec.hardware.nodes) <= 1:
        return []
    nic = _first_node_nic(spec, best)
    return [
        message(
            Code.NODE_SELECTION,
            nodes_used=nodes_used,
            nodes_offered=len(spec.hardware.nodes),
            gpu=best.gpu,
            link_gbps=nic.speed_gbps if nic else 0,
            link_kind=Term(nic.kind) if nic else Term.NONE,
            concurrency=spec.workload.concurrency,
        )
    ]


def quantization(spec: PlanSpec, ranking: Ranking) -> list[Message]:
    """Return "quantize first" when the requested dtype does not fit, and which forms barely do."""
    best, chosen = ranking.best, ranking.chosen_dtype
    if chosen == spec.weight_dtype:
        return []
    requested = ranking.by_dtype[spec.weight_dtype][0]
    out = [
        message(
            Code.QUANTIZE_FIRST,
            requested_dtype=spec.weight_dtype,
            requested_weights_gib=_r(requested.memory.weights_gib),
            dtype=chosen,
            weights_gib=_r(best.memory.weights_gib),
            kv_tokens=best.kv_tokens_per_replica,
        )
    ]
    for dtype, cs in ranking.by_dtype.items():
        if dtype in (chosen, spec.weight_dtype):
            continue
        top = max(cs, key=lambda c: c.kv_tokens_per_replica)
        if top.kv_tokens_per_replica < 4 * spec.max_model_len:
            out.append(
                message(
                    Code.QUANTIZED_BARELY,
                    dtype=dtype,
                    weights_gib=_r(top.memory.weights_gib),
                    kv_tokens=top.kv_tokens_per_replica,
                    max_concurrency=_r(top.max_concurrency_per_replica, 2),
                    max_model_len=spec.max_model_len,
                )
            )
    return out


def quantize_for_fewer_nodes(
    spec: PlanSpec, best: Candidate, chosen: str, by_dtype: Mapping[str, Sequence[Candidate]]
) -> list[Message]:
    """Return "quantize first" when a quantized form fits one replica in fewer nodes."""
    if not best.fits or not best.spans_nodes:
        return []
    for dtype in QUANT_LADDER[chosen]:
        fewer = [
            c
            for c in by_dtype.get(dtype, [])
            if c.fits and c.nodes_per_replica < best.nodes_per_replica
        ]
        if not fewer:
            continue
        pick = max(fewer, key=lambda c: (c.serves_load, -c.nodes_per_replica, c.score))
        nic = next(iter(_replica_nics(spec, best)), None)
        return [
            message(
                Code.QUANTIZE_FEWER_NODES,
                dtype=dtype,
                nodes=pick.nodes_per_replica,
                requested_dtype=chosen,
                requested_nodes=best.nodes_per_replica,
                link_gbps=nic.speed_gbps if nic else 0,
                weights_gib=_r(pick.memory.weights_gib),
                gpus=pick.gpus_per_replica,
                requested_weights_gib=_r(best.memory.weights_gib),
                requested_gpus=best.gpus_per_replica,
                kv_tokens=pick.kv_tokens_per_replica,
            )
        ]
    return []


def fit(spec: PlanSpec, best: Candidate) -> list[Message]:
    """Return that the model fits one GPU or one node (nothing when a replica spans nodes)."""
    if best.kind == CandidateKind.SINGLE_GPU and best.replicas == 1:
        return [
            message(
                Code.FITS_ONE_GPU,
                weights_gib=_r(best.memory.weights_gib),
                kv_tokens=best.kv_tokens_per_replica,
            )
        ]
    if best.spans_nodes:
        return []
    return [
        message(
            Code.FITS_ONE_NODE,
            tp=best.tp,
            weights_gib=_r(best.memory.weights_gib),
            max_concurrency=_r(best.max_concurrency_per_replica),
            max_model_len=spec.max_model_len,
        )
    ]


def replicas(
    spec: PlanSpec, best: Candidate, cands: Sequence[Candidate], balancer: Balancer
) -> list[Message]:
    """Return what several replicas behind a balancer give against one replica."""
    if best.replicas <= 1:
        return []
    one = next(
        (
            c
            for c in cands
            if (c.tp, c.pp, c.replicas, c.weight_dtype) == (best.tp, best.pp, 1, best.weight_dtype)
        ),
        None,
    )
    single = one if one is not None and one.fits else None
    return [
        message(
            Code.REPLICAS_BEHIND_BALANCER,
            replicas=best.replicas,
            tp=best.tp,
            pp=best.pp,
            balancer=balancer.value,
            balancer_config=message(
                Code.BALANCER_NGINX if balancer == Balancer.NGINX else Code.BALANCER_SERVE
            ),
            capacity_ratio=_r(
                ranked(best.capacity_output_tok_s) / ranked(single.capacity_output_tok_s)
                if single
                else 0,
                2,
            ),
            workload_ratio=_r(
                ranked(best.output_throughput_tok_s) / ranked(single.output_throughput_tok_s)
                if single
                else 0,
                2,
            ),
            concurrency=spec.workload.concurrency,
        )
    ]


def _runner_up_note(spec: PlanSpec, best: Candidate, runner: Candidate) -> Message:
    if not runner.serves_load:
        return message(
            Code.RUNNER_UP_SHORT_OF_LOAD,
            concurrency=spec.workload.concurrency,
            max_model_len=spec.max_model_len,
        )
    if runner.spans_nodes and not best.spans_nodes:
        return message(Code.RUNNER_UP_SPANS_NODES)
    if ranked(runner.output_throughput_tok_s) < ranked(best.output_throughput_tok_s):
        return message(Code.RUNNER_UP_HBM_BOUND)
    return message(Code.RUNNER_UP_NO_NOTE)


def layout_choice(spec: PlanSpec, best: Candidate, cands: Sequence[Candidate]) -> list[Message]:
    """Return why the best layout beats the runner-up of another TP×PP."""
    others = [c for c in cands if c.fits and (c.tp, c.pp) != (best.tp, best.pp)]
    if not others:
        return []
    runner = others[0]
    return [
        message(
            Code.LAYOUT_CHOICE,
            tp=best.tp,
            pp=best.pp,
            replicas=best.replicas,
            throughput_tok_s=_r(shown_tok_s(best) or 0.0, 0),
            concurrency=spec.workload.concurrency,
            itl_ms=_r(shown_tpot_ms(best) or 0.0),
            runner_up_tok_s=_r(shown_tok_s(runner) or 0.0, 0),
            runner_up=runner.label,
            runner_up_score=runner.score,
            runner_up_note=_runner_up_note(spec, best, runner),
        )
    ]


def cross_node_worse(spec: PlanSpec, best: Candidate, cands: Sequence[Candidate]) -> list[Message]:
    """Return how much slower tensor parallelism across nodes is, when it was a candidate."""
    cross = [c for c in cands if c.kind == CandidateKind.CROSS_NODE_TP and c.fits]
    if not cross or best.kind == CandidateKind.CROSS_NODE_TP:
        return []
    worst = max(cross, key=lambda c: ranked(c.comm_per_decode_step_ms))
    link = next(iter(_replica_nics(spec, worst)))
    return [
        message(
            Code.CROSS_NODE_WORSE,
            layout=f"TP{worst.tp}",
            comm_ms=_r(ranked(worst.comm_per_decode_step_ms)),
            link_gbps=link.speed_gbps if link else 1,
            compute_ms=_r(ranked(worst.decode_compute_ms), 2),
            slowdown=_r(ranked(worst.decode_step_ms) / max(ranked(best.decode_step_ms), 1e-9), 1),
            best=best.label,
        )
    ]


def _network_verdict(speed_gbps: float) -> Message:
    if speed_gbps < 10:
        return message(Code.LINK_TOO_SLOW)
    if speed_gbps < 100:
        return message(Code.LINK_WITH_CARE)
    return message(Code.LINK_COMFORTABLE)


def spanning(
    spec: PlanSpec, best: Candidate, cands: Sequence[Candidate], a: Assumptions
) -> list[Message]:
    """Return why one instance must span nodes, PP versus cross-node TP, and the link check."""
    single = [c for c in cands if c.nodes_per_replica == 1 and c.replicas == 1 and c.fits]
    out = [
        message(
            Code.MUST_SPAN_NODES,
            single_node_concurrency=_r(
                max((c.max_concurrency_per_replica for c in single), default=0.0)
            ),
            max_model_len=spec.max_model_len,
            concurrency=spec.workload.concurrency,
            nodes=best.nodes_per_replica,
            gpus=best.gpus_per_replica,
            span_concurrency=_r(best.max_concurrency_per_replica),
        )
    ]
    # Cross-node TP layouts that start (a layout that does not fit has no step figures).
    tp_cross = [
        c
        for c in cands
        if c.kind == CandidateKind.CROSS_NODE_TP and c.comm_per_decode_step_ms is not None
    ]
    if (
        best.kind == CandidateKind.CROSS_NODE_PP
        and tp_cross
        and best.pp_comm_per_decode_step_ms is not None
    ):
        out.append(
            message(
                Code.PP_OVER_CROSS_TP,
                tp=best.tp,
                pp=best.pp,
                cross_tp=tp_cross[0].tp,
                pp_comm_ms=_r(ranked(best.pp_comm_per_decode_step_ms), 2),
                tp_comm_ms=_r(ranked(tp_cross[0].comm_per_decode_step_ms), 1),
            )
        )
    nics = [x for x in _replica_nics(spec, best) if x is not None]
    speed = min((x.speed_gbps for x in nics), default=1.0)
    kind = nics[0].kind if nics else "ethernet"
    efficiency = {"infiniband": a.infiniband_efficiency, "roce": a.roce_efficiency}.get(
        kind, a.ethernet_efficiency
    )
    out.append(
        message(
            Code.NETWORK_CHECK,
            link_gbps=speed,
            link_kind=Term(kind),
            effective_gbs=_r(speed / 8 * efficiency, 2),
            verdict=_network_verdict(speed),
        )
    )
    return out


def chunked_prefill(
    spec: PlanSpec, best: Candidate, cands: Sequence[Candidate], a: Assumptions
) -> list[Message]:
    """Return that vLLM V1 starts long contexts which V0 could not (chunked prefill profiling)."""
    if spec.max_model_len < 32768:
        return []
    gpu = next(n.gpu for n in spec.hardware.nodes if n.gpu.slug == best.gpu)
    mnbt = spec.max_num_batched_tokens or default_batched_tokens(
        gpu.driver_visible_gib, gpu.slug, a, spec.vllm_version
    )
    single = [
        c
        for c in cands
        if c.nodes_per_replica == 1 and c.replicas == 1 and c.fits and c.gpus_per_replica > 1
    ]
    if not single or mnbt >= spec.max_model_len:
        return []
    top = max(single, key=lambda c: c.max_concurrency_per_replica)
    return [
        message(
            Code.V1_CHUNKED_PREFILL,
            max_model_len=spec.max_model_len,
            max_num_batched_tokens=str(mnbt),  # a flag value: never grouped like a count
            layout=top.label,
            max_concurrency=_r(top.max_concurrency_per_replica),
        )
    ]


def ray_verdict(deployment: Deployment, best: Candidate) -> Message:
    """Return whether the signals recommend Ray Serve, call for considering it, or not."""
    hits_for = [s for s in deployment.signals if s.direction == "for_ray" and s.hit]
    hits_against = [s for s in deployment.signals if s.direction == "against_ray" and s.hit]
    names = tuple(s.code for s in hits_for)
    if deployment.route == Route.C:
        return message(
            Code.RAY_ROUTE_C,
            hits=len(hits_for),
            signals=names,
            gpus_per_replica=best.gpus_per_replica,
        )
    if hits_for:
        return message(
            Code.RAY_CONSIDER, hits=len(hits_for), signals=names, hits_against=len(hits_against)
        )
    return message(Code.RAY_NOT_NEEDED, hits_for=0, hits_against=len(hits_against))


def load_and_slos(spec: PlanSpec, best: Candidate) -> list[Message]:
    """Return that the load queues, and every SLO the best layout misses."""
    wl = spec.workload
    out = []
    if not best.serves_load:
        out.append(
            message(
                Code.LOAD_NOT_SERVED,
                max_concurrency_total=_r(best.max_concurrency_total),
                max_model_len=spec.max_model_len,
                concurrency=wl.concurrency,
            )
        )
    # SLOs are p95 targets: judged on the simulated p95 when the candidate was simulated.
    ttft = best.serving.ttft_p95_ms if best.serving else best.ttft_ms
    itl = best.serving.itl_p95_ms if best.serving else best.itl_ms
    if wl.ttft_slo_ms is not None and ttft is not None and ttft > wl.ttft_slo_ms:
        out.append(
            message(Code.SLO_MISSED, metric=Term.TTFT, value_ms=_r(ttft), slo_ms=wl.ttft_slo_ms)
        )
    if wl.itl_slo_ms is not None and itl is not None and itl > wl.itl_slo_ms:
        out.append(
            message(Code.SLO_MISSED, metric=Term.ITL, value_ms=_r(itl), slo_ms=wl.itl_slo_ms)
        )
    return out
