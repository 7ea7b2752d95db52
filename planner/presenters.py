"""Turn an engine result dict into what the result templates show (translated, ordered)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from planner import engine_texts_i18n as engine_i18n
from planner.services.bundles import allocation_rows
from planner.services.charts import result_figures
from planner.services.compare import best_candidate
from planner.services.exports import config_files
from planner.texts import recommendation_sentence, render_messages, route_name

KIND_LABELS: dict[str, Any] = {
    "single-gpu": gettext_lazy("one GPU"),
    "intra-node": gettext_lazy("inside a node"),
    "cross-node-tp": gettext_lazy("TP across nodes"),
    "cross-node-pp": gettext_lazy("PP across nodes"),
}


def _num(value: Any, digits: int) -> str:
    try:
        return f"{float(value):.{digits}f}"
    except (TypeError, ValueError):
        return "—"


def candidate_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return every candidate, the recommendation first, with why it was rejected or ranked."""
    best = best_candidate(result)
    best_score = float(best.get("score") or 0)
    rows = []
    candidates = list(result.get("candidates") or [])
    pinned = result.get("pinned")
    if pinned and pinned.get("id") not in {c.get("id") for c in candidates}:
        candidates.append({**pinned, "pinned": True})
    for c in candidates:
        is_best = c.get("id") == best.get("id")
        if is_best:
            why = _("Recommended.")
        elif not c.get("fits"):
            why = _("Rejected: %(reason)s.") % {
                "reason": engine_i18n.phrase(c.get("rejected_reason")) or _("does not fit")
            }
        elif not c.get("serves_load"):
            why = _("Fits, but does not serve the target load (%(n)s sequences at most).") % {
                "n": _num(c.get("max_concurrency_total"), 1)
            }
        else:
            why = _(
                "Ranked lower: score %(score)s vs %(best)s; %(tok)s tok/s vs %(best_tok)s; "
                "TTFT %(ttft)s ms vs %(best_ttft)s ms."
            ) % {
                "score": _num(c.get("score"), 1),
                "best": _num(best_score, 1),
                "tok": _num(c.get("output_throughput_tok_s"), 0),
                "best_tok": _num(best.get("output_throughput_tok_s"), 0),
                "ttft": _num(c.get("ttft_ms"), 0),
                "best_ttft": _num(best.get("ttft_ms"), 0),
            }
        rows.append(
            {
                **c,
                "is_best": is_best,
                "why": why,
                "kind_label": str(KIND_LABELS.get(c.get("kind", ""), c.get("kind", ""))),
                # Pre-formatted: floatformat on ~50 rows × 7 columns dominated the page's time.
                "fmt": {
                    "weights": _num((c.get("memory") or {}).get("weights_gib"), 1),
                    "seqs": _num(c.get("max_concurrency_total"), 1),
                    "comm": _num(c.get("comm_per_decode_step_ms"), 2),
                    "tok": _num(c.get("output_throughput_tok_s"), 0),
                    "ttft": _num(c.get("ttft_ms"), 0),
                    "itl": _num(c.get("itl_ms"), 1),
                    "score": _num(c.get("score"), 1),
                },
            }
        )
    rows.sort(key=lambda r: (not r["is_best"], not r.get("fits"), -float(r.get("score") or 0)))
    return rows


def decision_url(public_id: Any) -> str | None:
    """Return the 'record this decision' URL when the decisions app provides it."""
    try:
        return reverse("decisions:create-from-plan", kwargs={"public_id": public_id})
    except NoReverseMatch:
        return None


def _allocation_context(result: Mapping[str, Any]) -> dict[str, Any]:
    """Return the recommended bundle's allocation table, or why there is no bundle."""
    configs = result.get("configs") or {}
    bundle = configs.get("bundle") or {}
    return {
        "allocation": allocation_rows(bundle) if bundle else [],
        "allocation_serve": (bundle.get("allocation") or {}).get("serve") or [],
        "bundle_refused": configs.get("refused") or [],
    }


def result_context(result: Mapping[str, Any], *, prefix: str = "") -> dict[str, Any]:
    """Return the template context of one result (chart ids prefixed for side-by-side pages)."""
    rec = result.get("recommendation") or {}
    figures = [
        {"id": f"{prefix}{key}", "data_id": f"{prefix}{key}-data", "figure": fig}
        for key, fig in result_figures(result).items()
    ]
    signals = render_messages(result.get("signals"))
    files = config_files(result)
    return {
        "result": result,
        "rec": rec,
        "route_name": route_name(rec.get("route", "")),
        "sentence": recommendation_sentence(result),
        "best": best_candidate(result),
        "reasons": render_messages(rec.get("reasons")),
        "candidates": candidate_rows(result),
        "pinned": result.get("pinned"),
        "signals_for": [s for s in signals if s.direction == "for_ray"],
        "signals_against": [s for s in signals if s.direction != "for_ray"],
        "signal_hits_for": sum(1 for s in signals if s.direction == "for_ray" and s.hit),
        "signal_hits_against": sum(1 for s in signals if s.direction != "for_ray" and s.hit),
        "pitfalls": render_messages(result.get("pitfalls")),
        "placement": result.get("placement") or {},
        "configs": result.get("configs") or {},
        **_allocation_context(result),
        "config_files": [
            {"name": name, "text": text, "id": f"{prefix}cfg-{i}"}
            for i, (name, text) in enumerate(files.items())
        ],
        "figures": figures,
        "assumptions": result.get("assumptions") or {},
        "network": result.get("network") or {},
        "model": result.get("model") or {},
        "quantization_options": result.get("quantization_options") or [],
        "node_selection": result.get("node_selection") or {},
    }
