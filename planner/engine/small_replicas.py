"""Many small replicas before one large TP group, when they serve the load nearly as fast."""

from __future__ import annotations

from collections.abc import Callable

from planner.engine.assumptions import Assumptions
from planner.engine.messages import Code, Message, message
from planner.engine.result import Candidate, ranked
from planner.engine.shown import shown_tok_s
from planner.engine.spec import PlanSpec

Simulate = Callable[[Candidate], Candidate]


def prefer_small_replicas(
    spec: PlanSpec, cands: list[Candidate], a: Assumptions, simulate: Simulate
) -> tuple[list[Candidate], Message | None]:
    """Put many TP1/TP2 replicas first when they serve the load nearly as fast (issue 13).

    A small model on a large fleet is best served by independent replicas inside nodes: no
    all-reduce per layer, more failure domains. A larger TP stays first only when the small
    replicas miss the load or an SLO, or reach less than `small_replica_min_share` of its
    output throughput; the reason says which.

    The closed-form steady state picks the small layout; the two layouts are then compared on
    the serving model's predictions (`simulate`), the figures the reason quotes and every page
    shows, so the share decided on is the share a reader sees (issue 32).
    """
    if not cands or not cands[0].fits or cands[0].tp <= 2 or cands[0].spans_nodes:
        return cands, None
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
    closed_form_pick = max(small, key=lambda c: (ranked(c.output_throughput_tok_s), c.replicas))
    best, pick = simulate(cands[0]), simulate(closed_form_pick)
    others = [c for c in cands[1:] if c is not closed_form_pick]
    best_tok_s, pick_tok_s = ranked(shown_tok_s(best)), ranked(shown_tok_s(pick))
    share = pick_tok_s / max(best_tok_s, 1e-9)
    params = {
        "tp": pick.tp,
        "larger_tp": best.tp,
        "share_pct": round(100 * share),
        "throughput_tok_s": round(pick_tok_s, 0),
        "larger_tok_s": round(best_tok_s, 0),
        "concurrency": wl.concurrency,
    }
    if share < a.small_replica_min_share:
        # The small layout keeps its closed-form place in the ranking, now simulated.
        at = cands.index(closed_form_pick)
        kept = [best, *cands[1:]]
        kept[at] = pick
        return kept, message(Code.LARGER_TP_WINS, **params)
    return [pick, best, *others], message(
        Code.SMALL_MODEL_REPLICAS,
        replicas=pick.replicas,
        larger_replicas=best.replicas,
        **params,
    )
