"""The recommended layout in the figures a team lead looks for first: how many copies on which
machines, the expected speed with its band, and the capacity against the load asked for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from planner.engine.result import Candidate, PlanResult
from planner.presentation.numbers import amount, count
from planner.presentation.shown import shown_speed


@dataclass(frozen=True, slots=True)
class Fact:
    label: str
    value: str
    testid: str


def _copies(best: Candidate) -> str:
    return ngettext(
        "%(n)s copy of TP%(tp)s×PP%(pp)s (%(gpus)s GPUs each, %(total)s in all)",
        "%(n)s copies of TP%(tp)s×PP%(pp)s (%(gpus)s GPUs each, %(total)s in all)",
        best.replicas,
    ) % {
        "n": count(best.replicas),
        "tp": best.tp,
        "pp": best.pp,
        "gpus": count(best.gpus_per_replica),
        "total": count(best.gpus_per_replica * best.replicas),
    }


def _machines(best: Candidate) -> str:
    """Return which machines hold which copy: "copy 1: a800-01 · copy 2: a800-02"."""
    parts = [
        _("copy %(n)s: %(hosts)s") % {"n": i + 1, "hosts": _(" + ").join(hosts)}
        for i, hosts in enumerate(best.hosts)
    ]
    return _(" · ").join(parts) or "—"


def _capacity(result: PlanResult, best: Candidate, concurrency: Any) -> str:
    per_copy = int(best.max_concurrency_per_replica + 1e-9)
    total = int(best.max_concurrency_total + 1e-9)
    held = _("%(per)s sequences of %(ctx)s tokens per copy, %(total)s in all") % {
        "per": count(per_copy),
        "ctx": count(result.model.max_model_len),
        "total": count(total),
    }
    if isinstance(concurrency, int | float):
        held += _("; you asked for %(n)s in flight") % {"n": count(concurrency)}
    return held


def layout_facts(
    result: PlanResult, engine_input: Mapping[str, Any] | None = None
) -> tuple[Fact, ...]:
    """Return the recommended layout's figures, or none when nothing fits."""
    best = result.best
    if best is None or not result.recommendation.fits:
        return ()
    concurrency = ((engine_input or {}).get("workload") or {}).get("concurrency")
    facts = [
        Fact(_("Copies"), _copies(best), "fact-copies"),
        Fact(_("Machines"), _machines(best), "fact-machines"),
    ]
    speed = shown_speed(best, result)
    if speed is not None:
        first = speed.ttft_text(" ms")
        if speed.ttft_p95_ms is not None:
            first += _(", p95 %(ms)s ms") % {"ms": amount(speed.ttft_p95_ms)}
        facts += [
            Fact(_("Output throughput"), speed.tok_s_text(" tok/s"), "fact-tok-s"),
            Fact(_("First token"), first, "fact-ttft"),
            Fact(_("Per output token"), speed.tpot_text(" ms"), "fact-tpot"),
        ]
    facts.append(Fact(_("Capacity"), _capacity(result, best, concurrency), "fact-capacity"))
    return tuple(facts)
