"""Turn an engine result dict into what the result templates show (translated, ordered)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from planner.engine.result import Candidate, PlanResult
from planner.presentation.assumptions import assumption_rows
from planner.presentation.footnotes import footnoted
from planner.presentation.layout_facts import layout_facts
from planner.presentation.messages import shown_all, text
from planner.presentation.numbers import amount, count
from planner.presentation.pitfalls import relevant_pitfalls
from planner.presentation.ray_answer import ray_answer
from planner.presentation.routes import route_options, signal_hits
from planner.presentation.shown import shown_speed
from planner.presentation.verdict import plan_verdict, recommendation_sentence
from planner.services.bundles import allocation_rows
from planner.services.charts import result_figures
from planner.services.exports import config_files

KIND_LABELS: dict[str, Any] = {
    "single-gpu": gettext_lazy("one GPU"),
    "intra-node": gettext_lazy("inside a node"),
    "cross-node-tp": gettext_lazy("TP across nodes"),
    "cross-node-pp": gettext_lazy("PP across nodes"),
}


def _num(value: Any, digits: int) -> str:
    """Return a figure in the reader's locale with `digits` decimals ("—" when there is none)."""
    try:
        return amount(float(value), digits)
    except (TypeError, ValueError):
        return "—"


@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateRow:
    """One row of the layouts table: the candidate, whether it is the pick, and why not."""

    c: Candidate
    is_best: bool
    why: str
    kind_label: str
    fmt: dict[str, str]
    # Why measured kernel tables timed none or only some of its steps ("" when not asked).
    step_backend_notice: str = ""


def _why(c: Candidate, best: Candidate | None) -> str:
    if best is not None and c.id == best.id:
        return _("Recommended.")
    if not c.placeable and c.placement_reason is not None and c.placement_hint is not None:
        if c.output_throughput_tok_s is not None:  # it fits: only room is missing
            return _("Not placeable now: %(reason)s; %(hint)s.") % {
                "reason": text(c.placement_reason),
                "hint": text(c.placement_hint),
            }
        return _("Rejected: %(reason)s. Not placeable now either: %(hint)s.") % {
            "reason": text(c.rejected_reason) if c.rejected_reason else _("does not fit"),
            "hint": text(c.placement_hint),
        }
    if not c.fits:
        return _("Rejected: %(reason)s.") % {
            "reason": text(c.rejected_reason) if c.rejected_reason else _("does not fit")
        }
    if not c.serves_load:
        most = math.floor(c.max_concurrency_total + 1e-9)
        return ngettext(
            "Fits, but does not serve the target load (%(n)s sequence at most).",
            "Fits, but does not serve the target load (%(n)s sequences at most).",
            most,
        ) % {"n": count(most)}
    return _("Ranked lower: score %(score)s vs %(best)s.") % {
        "score": _num(c.score, 1),
        "best": _num(best.score if best else None, 1),
    }


def _speed_cells(c: Candidate, result: PlanResult) -> dict[str, str]:
    """Return the shown speed of `c` with its bands ("—" when it does not fit or was not
    simulated: the closed-form figures only rank the layouts)."""
    speed = shown_speed(c, result)
    if speed is None:
        return {"tok": "—", "ttft": "—", "itl": "—"}
    return {"tok": speed.tok_s_text(), "ttft": speed.ttft_text(), "itl": speed.tpot_text()}


def candidate_rows(result: PlanResult) -> list[CandidateRow]:
    """Return every candidate, the recommendation first, with why it was rejected or ranked."""
    best = result.best
    candidates = list(result.candidates)
    if result.pinned is not None and result.pinned.id not in {c.id for c in candidates}:
        candidates.append(result.pinned)
    rows = [
        CandidateRow(
            c=c,
            is_best=best is not None and c.id == best.id,
            why=_why(c, best),
            kind_label=str(KIND_LABELS.get(c.kind, c.kind)),
            step_backend_notice=text(c.serving.step_backend_notice) if c.serving else "",
            # Pre-formatted: floatformat on ~50 rows × 7 columns dominated the page's time.
            fmt={
                "weights": _num(c.memory.weights_gib, 1),
                "kv_tokens": count(c.kv_tokens_per_replica),
                # Whole sequences: 42.7 fit means 42 do.
                "seqs": count(c.max_concurrency_total),
                "comm": _num(c.comm_per_decode_step_ms, 2),
                # A layout that does not fit never starts: no speed (its TTFT reads ~10^14 ms).
                **_speed_cells(c, result),
                "score": _num(c.score, 1),
            },
        )
        for c in candidates
    ]
    rows.sort(key=lambda r: (not r.is_best, not r.c.fits, -r.c.score))
    return rows


def decision_url(public_id: Any) -> str | None:
    """Return the 'record this decision' URL when the decisions app provides it."""
    try:
        return reverse("decisions:create-from-plan", kwargs={"public_id": public_id})
    except NoReverseMatch:
        return None


def _allocation_context(result: PlanResult) -> dict[str, Any]:
    """Return the recommended bundle's allocation table, or why there is no bundle."""
    bundle = result.configs.get("bundle") or {}
    return {
        "allocation": allocation_rows(bundle) if bundle else [],
        "allocation_serve": (bundle.get("allocation") or {}).get("serve") or [],
        "bundle_refused": result.configs.get("refused") or [],
        # Saved before bundles existed: the download rebuilds it from the plan's input.
        "bundle_legacy": "bundle" not in result.configs and result.recommendation.fits,
    }


def result_context(
    result: PlanResult, *, prefix: str = "", engine_input: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return the template context of one result (chart ids prefixed for side-by-side pages).

    `engine_input` is what the engine was given: the SLOs the verdict checks come from it.
    """
    rec = result.recommendation
    figures = [
        {"id": f"{prefix}{key}", "data_id": f"{prefix}{key}-data", "figure": fig}
        for key, fig in result_figures(result).items()
    ]
    signals = shown_all(result.signals)
    reasons = shown_all(rec.reasons)
    footnoted_reasons, sources = footnoted(reasons)
    files = config_files(result)
    hits_for, hits_against = signal_hits(result)
    return {
        "result": result,
        "rec": rec,
        "sentence": recommendation_sentence(result, engine_input),
        "best": result.best,
        "reasons": reasons,
        "footnoted_reasons": footnoted_reasons,
        "sources": sources,
        "candidates": candidate_rows(result),
        "signals_for": [s for s in signals if s.direction == "for_ray"],
        "signals_against": [s for s in signals if s.direction != "for_ray"],
        "signal_hits_for": hits_for,
        "signal_hits_against": hits_against,
        "verdict": plan_verdict(result, engine_input),
        "ray": ray_answer(result),
        "facts": layout_facts(result, engine_input),
        "routes": route_options(result),
        "pitfalls": shown_all(relevant_pitfalls(result)),
        "placement": result.placement,
        "single_bundle_reason": text(result.placement.single_bundle.reason),
        "configs": result.configs,
        **_allocation_context(result),
        "config_files": [
            {"name": name, "text": text, "id": f"{prefix}cfg-{i}"}
            for i, (name, text) in enumerate(files.items())
        ],
        "figures": figures,
        "assumption_rows": assumption_rows(result.assumptions),
        "network": result.network,
        "model": result.model,
        "quantization_options": result.quantization_options,
    }
