"""The plan's summaries: the recommendation in one sentence, the model's size and the links."""

from __future__ import annotations

from catalog.architecture import parameter_breakdown
from planner.engine.assumptions import Assumptions
from planner.engine.layouts import NodeGroup
from planner.engine.memory import kv_bytes_per_token
from planner.engine.memory.room import SETTING_WOULD_START
from planner.engine.messages import Code, Message, Term, message
from planner.engine.network import Link, domain_example, inter_node_link, intra_node_link
from planner.engine.result import (
    Backend,
    Balancer,
    Candidate,
    LinkSummary,
    ModelSummary,
    NetworkSummary,
    Route,
)
from planner.engine.shown import shown_tok_s, shown_tpot_ms, shown_ttft_ms
from planner.engine.spec import PlanSpec


def _hosts(names: set[str]) -> str | Message:
    """Return the machines a recommendation uses: four named, then how many more."""
    hosts = sorted(names)
    shown = ", ".join(hosts[:4])
    return (
        shown if len(hosts) <= 4 else message(Code.HOSTS_AND_MORE, hosts=shown, more=len(hosts) - 4)
    )


def _link_summary(link: Link) -> LinkSummary:
    return LinkSummary(
        label=link.label, bandwidth_gbs=link.bandwidth_gbs, latency_us=link.latency_us
    )


_ROUTE_CODES = {
    Route.SINGLE: Code.ROUTE_SINGLE,
    Route.A: Code.ROUTE_A,
    Route.B: Code.ROUTE_B,
    Route.C: Code.ROUTE_C,
}


def recommendation_summary(
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
        where = {"model": spec.model_name, "max_model_len": spec.max_model_len, "gpu": best.gpu}
        reason = best.rejected_reason
        if reason is not None and reason.code in SETTING_WOULD_START:
            # A setting starts it (memory/room.py): more GPUs or a shorter context are not the
            # answer to lead with.
            return message(Code.SUMMARY_NOTHING_FITS_AS_SET, **where, dtype=chosen, reason=reason)
        return message(Code.SUMMARY_NOTHING_FITS, **where, dtype=chosen)
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
        max_concurrency=round(best.max_concurrency_per_replica, 1),
        max_model_len=max_model_len,
        throughput_tok_s=round(shown_tok_s(best) or 0.0, 0),
        concurrency=concurrency,
        ttft_ms=round(shown_ttft_ms(best) or 0.0, 0),
        itl_ms=round(shown_tpot_ms(best) or 0.0, 1),
        backend=backend.value,
        # No balancer is a word to translate; a balancer's name is shown as it is.
        balancer=Term.NONE if balancer == Balancer.NONE else balancer.value,
    )


def network_summary(
    spec: PlanSpec, group: NodeGroup, nodes_used: int, a: Assumptions, *, ring: int
) -> NetworkSummary:
    """Return the links inside and between the chosen GPU type's nodes, and the §2 example
    (`ring`: the recommended TP, whose group the link inside a node carries)."""
    intra = intra_node_link(
        group.nodes[0], a, spec.network, ring=min(ring, group.nodes[0].gpu_count)
    )
    inter = inter_node_link(list(group.nodes[: max(2, nodes_used)]), a, spec.network)
    return NetworkSummary(
        intra_node=_link_summary(intra),
        inter_node=_link_summary(inter),
        overlap_factor=a.overlap_factor,
        domain_example_ms=domain_example(a),
    )


def model_summary(spec: PlanSpec, chosen: str) -> ModelSummary:
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
