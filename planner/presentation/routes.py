"""The three routes side by side for the same inputs: fit, speed, what the team owns, and what
would change the choice. Read from the typed result: the layouts the engine evaluated and the
signals for and against Ray."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from planner.engine.result import Candidate, Direction, PlanResult, Route
from planner.labels import ROUTE_TITLES
from planner.presentation.numbers import amount, count
from planner.presentation.shown import shown_speed


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteOption:
    route: Route
    title: str
    chosen: bool
    layout: str  # "" when the route has no layout on these machines
    verdict: str
    fit: str
    throughput: str
    latency: str
    burden: str
    changes_choice: str


def _leading(result: PlanResult, *, spans_nodes: bool) -> Candidate | None:
    """Return the layout the engine ranks first among those that fit inside one node (or
    across nodes): the recommendation when it is one of them, never a re-ranking by score
    (the engine may prefer small replicas to a higher-scoring larger TP)."""
    best = result.best
    if best is not None and best.fits and best.spans_nodes == spans_nodes:
        return best
    return next((c for c in result.candidates if c.fits and c.spans_nodes == spans_nodes), None)


def _fit(c: Candidate | None, result: PlanResult) -> str:
    if c is None:
        return _("no layout fits")
    held = _("holds %(seqs)s sequences of %(ctx)s tokens per replica") % {
        "seqs": count(c.max_concurrency_per_replica),
        "ctx": count(result.model.max_model_len),
    }
    if c.spans_nodes:
        return _("each replica spans %(nodes)s nodes; %(held)s") % {
            "nodes": count(c.nodes_per_replica),
            "held": held,
        }
    return _("each replica inside one node; %(held)s") % {"held": held}


def _speed(c: Candidate | None, result: PlanResult) -> tuple[str, str]:
    speed = shown_speed(c, result)
    if speed is None:
        return "—", "—"
    return (
        _("%(tok)s output tok/s") % {"tok": speed.tok_s_text()},
        _("first token %(ttft)s ms, then %(itl)s ms per token")
        % {"ttft": speed.ttft_text(), "itl": speed.tpot_text()},
    )


def signal_hits(result: PlanResult) -> tuple[int, int]:
    """Return how many signals for Ray and how many against it hit."""
    hits = [s for s in result.signals if s.hit]
    return (
        sum(s.direction == Direction.FOR_RAY for s in hits),
        sum(s.direction == Direction.AGAINST_RAY for s in hits),
    )


def _option(
    route: Route,
    c: Candidate | None,
    result: PlanResult,
    *,
    verdict: str,
    burden: str,
    changes_choice: str,
) -> RouteOption:
    """Return one route's row: the layout `c` it would run (None: none fits) and its figures."""
    throughput, latency = _speed(c, result)
    return RouteOption(
        route=route,
        title=str(ROUTE_TITLES[route]),
        chosen=result.recommendation.route == route,
        layout=c.label if c else "",
        verdict=verdict,
        fit=_fit(c, result),
        throughput=throughput,
        latency=latency,
        burden=burden,
        changes_choice=changes_choice,
    )


def route_options(result: PlanResult) -> tuple[RouteOption, ...]:
    """Return replicas inside nodes (single or A), one instance across nodes (B) and a Ray Serve
    pool (C), each with the layout it would run and the engine's verdict on it."""
    chosen = result.recommendation.route
    inside = _leading(result, spans_nodes=False)
    across = _leading(result, spans_nodes=True)
    inside_route = Route.SINGLE if inside is not None and inside.replicas == 1 else Route.A
    if chosen in (Route.SINGLE, Route.A):
        inside_route = chosen
    for_ray, against_ray = signal_hits(result)

    def verdict_inside() -> str:
        if chosen == inside_route:
            return _("Recommended.")
        if inside is None:
            return _("Not possible: no layout fits inside one node.")
        if not inside.serves_load:
            return _(
                "Possible, but %(layout)s cannot hold the target concurrency inside one node."
            ) % {"layout": inside.label}
        return _("Possible (%(layout)s, score %(score)s), ranked lower.") % {
            "layout": inside.label,
            "score": amount(inside.score),
        }

    def verdict_across() -> str:
        if chosen == Route.B:
            return _("Recommended.")
        if across is None:
            return _("Not possible: no layout across nodes fits.")
        if inside is not None and inside.serves_load:
            return _(
                "Not needed: replicas inside one node already serve the load (%(layout)s "
                "across nodes scores %(score)s)."
            ) % {"layout": across.label, "score": amount(across.score)}
        return _("Possible (%(layout)s, score %(score)s), ranked lower.") % {
            "layout": across.label,
            "score": amount(across.score),
        }

    def verdict_ray() -> str:
        if chosen == Route.C:
            return ngettext(
                "Recommended: %(for)s signal for Ray hit.",
                "Recommended: %(for)s signals for Ray hit.",
                for_ray,
            ) % {"for": for_ray}
        if inside is None:
            return _("Not possible: Serve replicas must each fit inside one node.")
        return ngettext(
            "Not recommended: %(for)s signal for Ray hit, %(against)s against.",
            "Not recommended: %(for)s signals for Ray hit, %(against)s against.",
            for_ray,
        ) % {
            "for": for_ray,
            "against": against_ray,
        }

    return (
        _option(
            inside_route,
            inside,
            result,
            verdict=verdict_inside(),
            burden=_(
                "vLLM servers, one per replica, behind a balancer (Nginx or your gateway); the "
                "bundle's containers restart a failed server on the same machine, nothing moves "
                "it elsewhere. No Ray."
            ),
            changes_choice=_(
                "A model or context that no longer fits one node's GPUs moves to Route B; "
                "models that change often or several models sharing the GPUs move to Route C."
            ),
        ),
        _option(
            Route.B,
            across,
            result,
            verdict=verdict_across(),
            burden=_(
                "One vLLM process per node started in order (or a Ray cluster), the network "
                "between the nodes, and NCCL settings; one failed node stops the instance."
            ),
            changes_choice=_(
                "Quantized weights, a shorter context or GPUs with more memory that let one "
                "node hold the load move back to replicas inside nodes."
            ),
        ),
        _option(
            Route.C,
            inside,  # Serve replicas are the inside-node layout, run by Ray
            result,
            verdict=verdict_ray(),
            burden=_(
                "A Ray cluster (head and workers, versions pinned to the vLLM image) and Ray "
                "Serve deployments with autoscaling and restarts."
            ),
            changes_choice=_(
                "A high-strength signal for Ray (several models sharing the pool, a Ray estate "
                "already running) or two medium ones recommend it; a fixed fleet serving one "
                "fixed model does not."
            ),
        ),
    )
