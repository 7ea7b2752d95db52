"""Compare two engine results (saved plans, a re-run, or a "what if") field by field."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from django.utils.translation import gettext_lazy as _

from planner.engine.result import PlanResult
from planner.engine.shown import shown_tok_s, shown_tpot_ms, shown_ttft_ms
from planner.presentation.messages import message_key, text
from planner.selectors import plan_result


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffRow:
    key: str
    label: str
    left: Any
    right: Any

    @property
    def changed(self) -> bool:
        return self.left != self.right


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """Rows of the recommendation and its figures, the spec, and the messages that came or went."""

    recommendation: list[DiffRow]
    figures: list[DiffRow]
    spec: list[DiffRow]
    pitfalls_added: list[str] = field(default_factory=list)
    pitfalls_removed: list[str] = field(default_factory=list)
    signals_changed: list[DiffRow] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)  # signal/pitfall id -> reader's words

    def pitfall_rows(self) -> list[DiffRow]:
        """Return the pitfalls that came (right only) or went (left only), in words."""
        return [
            DiffRow(key=k, label=self.labels.get(k, k), left=None, right=True)
            for k in self.pitfalls_added
        ] + [
            DiffRow(key=k, label=self.labels.get(k, k), left=True, right=None)
            for k in self.pitfalls_removed
        ]

    @property
    def changed_count(self) -> int:
        rows = self.recommendation + self.figures + self.spec + self.signals_changed
        return sum(r.changed for r in rows) + len(self.pitfalls_added) + len(self.pitfalls_removed)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able dict (for the API)."""

        def rows(items: list[DiffRow]) -> list[dict[str, Any]]:
            return [
                {"key": r.key, "left": r.left, "right": r.right, "changed": r.changed}
                for r in items
            ]

        return {
            "recommendation": rows(self.recommendation),
            "figures": rows(self.figures),
            "spec": rows(self.spec),
            "signals": rows(self.signals_changed),
            "pitfalls_added": self.pitfalls_added,
            "pitfalls_removed": self.pitfalls_removed,
            "changed_count": self.changed_count,
        }


RECOMMENDATION_FIELDS = (
    ("route", _("Route")),
    ("tp", _("Tensor parallel")),
    ("pp", _("Pipeline parallel")),
    ("replicas", _("Replicas")),
    ("nodes_per_replica", _("Nodes per replica")),
    ("weight_dtype", _("Weight dtype")),
    ("executor_backend", _("Executor backend")),
    ("balancer", _("Balancer")),
)

FIGURE_FIELDS = (
    ("memory.weights_gib", _("Weights per GPU (GiB)")),
    ("memory.kv_budget_gib", _("KV budget per GPU (GiB)")),
    ("kv_tokens_per_replica", _("KV tokens per replica")),
    ("max_concurrency_total", _("Max concurrent sequences at max_model_len")),
    ("output_tok_s", _("Output throughput at the load (tok/s)")),
    ("capacity_output_tok_s", _("Output capacity at saturation (tok/s)")),
    ("ttft_p50_ms", _("TTFT, median (ms)")),
    ("tpot_p50_ms", _("Time per output token, median (ms)")),
    ("comm_per_decode_step_ms", _("Communication per decode step (ms)")),
)
# The speed figures are the serving model's prediction, the ones the plan page shows (issue
# 32: one number per quantity); the closed-form steady state only ranks the layouts.
SHOWN_SPEEDS = {
    "output_tok_s": shown_tok_s,
    "ttft_p50_ms": shown_ttft_ms,
    "tpot_p50_ms": shown_tpot_ms,
}


def _figure(result: PlanResult, key: str) -> Any:
    """Return a figure of the recommended candidate (None in a snapshot without one)."""
    best = result.best
    if best is None:
        return None
    if key in SHOWN_SPEEDS:
        value = SHOWN_SPEEDS[key](best) if best.fits else None
        return None if value is None else round(value, 1)
    return attrgetter(key)(best)


def flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    """Return {'workload.concurrency': 16, ...} for a nested dict (lists stay whole)."""
    out: dict[str, Any] = {}
    if isinstance(d, Mapping):
        for key, value in d.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, Mapping) and key != "hf_config":
                out.update(flatten(value, path))
            else:
                out[path] = value
    return out


def _as_saved(result: PlanResult) -> PlanResult:
    return PlanResult.from_dict(result.to_dict())


def compare_results(
    *,
    left_result: PlanResult,
    right_result: PlanResult,
    left_spec: Mapping[str, Any] | None = None,
    right_spec: Mapping[str, Any] | None = None,
) -> Comparison:
    """Return the differences between two engine results (and the specs behind them).

    Both are compared as a saved plan stores them (figures rounded): a fresh evaluation of the
    same answers then matches its saved plan instead of differing in the fourth decimal.
    """
    left_result, right_result = _as_saved(left_result), _as_saved(right_result)
    lrec, rrec = left_result.recommendation, right_result.recommendation
    recommendation = [
        DiffRow(key=k, label=str(label), left=getattr(lrec, k), right=getattr(rrec, k))
        for k, label in RECOMMENDATION_FIELDS
    ]
    figures = [
        DiffRow(
            key=k, label=str(label), left=_figure(left_result, k), right=_figure(right_result, k)
        )
        for k, label in FIGURE_FIELDS
    ]
    lspec, rspec = flatten(left_spec or {}), flatten(right_spec or {})
    spec_rows = [
        DiffRow(key=k, label=k, left=lspec.get(k), right=rspec.get(k))
        for k in sorted(set(lspec) | set(rspec))
        if k != "title"
    ]
    lpit = {message_key(p.message) for p in left_result.pitfalls}
    rpit = {message_key(p.message) for p in right_result.pitfalls}
    lsig = {message_key(s.message): s.hit for s in left_result.signals}
    rsig = {message_key(s.message): s.hit for s in right_result.signals}
    # Readers see each signal and pitfall in words (the newer side's), never its code.
    words = {
        message_key(m.message): text(m.message)
        for m in (*left_result.signals, *left_result.pitfalls)
        + (*right_result.signals, *right_result.pitfalls)
    }
    signals = [
        DiffRow(key=k, label=words.get(k, k), left=lsig.get(k), right=rsig.get(k))
        for k in sorted(set(lsig) | set(rsig))
        if lsig.get(k) != rsig.get(k)
    ]
    return Comparison(
        recommendation=recommendation,
        figures=figures,
        spec=spec_rows,
        pitfalls_added=sorted(rpit - lpit),
        pitfalls_removed=sorted(lpit - rpit),
        signals_changed=signals,
        labels=words,
    )


def compare_plans(left: Any, right: Any) -> Comparison:
    """Return the differences between two saved plans."""
    return compare_results(
        left_result=plan_result(left),
        right_result=plan_result(right),
        left_spec=left.spec,
        right_spec=right.spec,
    )
