"""The first question a team lead asks of a plan, answered in one line: "Do we need Ray?"

Read from the typed result only: the route, the executor backend and the signals for and
against Ray that hit. The line says yes or no and why, in the reader's language.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from planner.engine.result import Backend, Direction, PlanResult, Route
from planner.presentation.numbers import count
from planner.presentation.templates import TEMPLATES


@dataclass(frozen=True, slots=True, kw_only=True)
class RayAnswer:
    needed: bool | None  # None: nothing fits, so there is nothing to run
    line: str  # the one-line answer
    why: str  # the signals that decided it, in a sentence


def _signal_names(result: PlanResult, direction: Direction) -> list[str]:
    """Return the short names of the signals that hit in `direction`, translated."""
    hits = [s for s in result.signals if s.hit and s.direction == direction]
    # A plan saved before signals were codes has no short names: its signals are only counted.
    return [_(TEMPLATES[s.code].name) for s in hits if TEMPLATES[s.code].name] or [""] * len(hits)


def signals_sentence(result: PlanResult) -> str:
    """Return the signals for and against Ray that hit, in one sentence."""
    hits_for = _signal_names(result, Direction.FOR_RAY)
    hits_against = _signal_names(result, Direction.AGAINST_RAY)
    said = ngettext(
        "%(for)s signal for Ray hit",
        "%(for)s signals for Ray hit",
        len(hits_for),
    ) % {"for": count(len(hits_for))}
    if any(hits_for):
        said += _(" (%(names)s)") % {"names": _(", ").join(hits_for)}
    against = _("%(against)s against") % {"against": count(len(hits_against))}
    if any(hits_against):
        against += _(" (%(names)s)") % {"names": _(", ").join(hits_against)}
    return _("%(for)s, %(against)s.") % {"for": said, "against": against}


def ray_answer(result: PlanResult) -> RayAnswer:
    """Return whether the recommended deployment needs Ray, in one line, and why."""
    rec, best = result.recommendation, result.best
    if not rec.fits or best is None:
        return RayAnswer(
            needed=None,
            line=_("No answer yet: no layout fits the offered machines."),
            why="",
        )
    why = signals_sentence(result)
    if rec.route == Route.C:
        line = _("Yes: a Ray Serve pool runs and restarts the replicas.")
        return RayAnswer(needed=True, line=line, why=why)
    if rec.executor_backend == Backend.RAY:
        line = _("Yes: Ray starts the workers of the instance and reserves its GPUs as a group.")
        return RayAnswer(needed=True, line=line, why=why)
    if best.spans_nodes:
        line = _(
            "No: one vLLM instance spans %(nodes)s nodes with vLLM's own multiprocessing "
            "executor, started node by node."
        ) % {"nodes": count(best.nodes_per_replica)}
    elif best.replicas > 1:
        line = ngettext(
            "No: %(n)s vLLM server behind %(balancer)s, each inside one machine.",
            "No: %(n)s independent vLLM servers behind %(balancer)s, each inside one machine.",
            best.replicas,
        ) % {"n": count(best.replicas), "balancer": rec.balancer}
    else:
        line = _("No: one vLLM server inside one machine.")
    return RayAnswer(needed=False, line=line, why=why)
