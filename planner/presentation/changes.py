"""The change summary of a "what if": which answers the engine saw differently, what followed.

Every statement is derived from the two engine inputs and the two results, never from the form
alone: an answer asked for but already so is said to be unchanged, an outcome is listed only
when its value differs, and a direction ("rises", "falls") is read from the two numbers. So the
summary cannot contradict the difference table below it (tests/planner/test_what_if_summary.py
checks it over random changes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from planner.engine.result import PlanResult, Recommendation
from planner.engine.shown import shown_tok_s
from planner.engine.spec import PlanSpec, SpecError, spec_from_dict
from planner.presentation.compare import Comparison, DiffRow
from planner.presentation.numbers import amount, count
from planner.selectors import plan_result

# Answers a what-if can change, in the order they are shown: key -> label.
ANSWERS: dict[str, Any] = {
    "machines": gettext_lazy("Number of machines"),
    "gpu": gettext_lazy("GPU type"),
    "link": gettext_lazy("Network between machines"),
    "weight_dtype": gettext_lazy("Weight precision"),
    "kv_cache_dtype": gettext_lazy("KV-cache precision"),
    "max_model_len": gettext_lazy("Maximum context (tokens)"),
    "rope_scaling_factor": gettext_lazy("Extend the context with YaRN"),
    "concurrency": gettext_lazy("Concurrent sequences"),
    "calibration": gettext_lazy("Calibration profile"),
}
# The what-if form's field behind each answer.
FORM_FIELDS = {
    "machine_count": "machines",
    "gpu": "gpu",
    "link": "link",
    "weight_dtype": "weight_dtype",
    "kv_cache_dtype": "kv_cache_dtype",
    "max_model_len": "max_model_len",
    "rope_scaling_factor": "rope_scaling_factor",
    "concurrency": "concurrency",
    "calibration": "calibration",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One value before and after, as the reader sees it."""

    key: str
    label: str
    before: str
    after: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeSummary:
    """What the what-if changed in the engine's input, and what changed in its answer."""

    answers: tuple[Change, ...]  # answers the engine saw differently
    already: tuple[Change, ...]  # answers asked for that were already so (before == after)
    outcome: tuple[Change, ...]  # recommendation and key figures that differ
    why: tuple[str, ...]  # one sentence per cause the results show

    @property
    def changes_nothing(self) -> bool:
        return not self.outcome


_LINK_NAMES = {"ethernet": "{n} GbE", "roce": "{n} Gb RoCE", "infiniband": "{n} Gb InfiniBand"}


def _link(spec: PlanSpec) -> str:
    links = set()
    for node in spec.hardware.nodes:
        nic = node.data_nic
        if nic is None:
            links.add(_("no data link"))
            continue
        name = _LINK_NAMES.get(nic.kind, "{n} Gb/s " + nic.kind)
        links.add(name.format(n=amount(nic.speed_gbps, 0)))
    return ", ".join(sorted(links))


def answers_of(spec: PlanSpec, calibration: Any) -> dict[str, str]:
    """Return the what-if answers as the engine saw them in `spec`, as the reader reads them."""
    return {
        "machines": count(len(spec.hardware.nodes)),
        "gpu": ", ".join(sorted({n.gpu.name for n in spec.hardware.nodes})),
        "link": _link(spec),
        "weight_dtype": spec.weight_dtype,
        "kv_cache_dtype": spec.kv_cache_dtype,
        "max_model_len": count(spec.max_model_len),
        "rope_scaling_factor": "×" + amount(spec.rope_scaling_factor, 0)
        if spec.rope_scaling_factor > 1
        else _("no"),
        "concurrency": count(spec.workload.concurrency),
        "calibration": str(calibration) if calibration else _("none: the engine's own constants"),
    }


def _engine_answers(
    engine_input: Mapping[str, Any], user_spec: Mapping[str, Any]
) -> dict[str, str]:
    try:
        spec = spec_from_dict(engine_input)
    except SpecError:
        return {}  # a snapshot whose input no longer validates: compare the results only
    return answers_of(spec, user_spec.get("calibration"))


def _shown(value: Any, decimals: int = 1) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, int):
        return count(value)
    if isinstance(value, float):
        return amount(value, decimals)
    return str(value)


def _outcome(rows: list[DiffRow]) -> tuple[Change, ...]:
    """Return the rows that changed, each shown with enough decimals to tell them apart."""
    out = []
    for r in rows:
        if not r.changed:
            continue
        decimals = 1
        while _shown(r.left, decimals) == _shown(r.right, decimals) and decimals < 9:
            decimals += 1
        before, after = _shown(r.left, decimals), _shown(r.right, decimals)
        if before == after:  # equal in every shown decimal: the raw values differ
            before, after = repr(r.left), repr(r.right)
        out.append(Change(key=r.key, label=r.label, before=before, after=after))
    return tuple(out)


def _route_why(lrec: Recommendation, rrec: Recommendation) -> str:
    routes = {"before": lrec.route, "after": rrec.route}
    if rrec.nodes_per_replica > 1 and lrec.nodes_per_replica == 1:
        return _("Route %(before)s → %(after)s: one replica now spans %(nodes)s machines.") % {
            **routes,
            "nodes": count(rrec.nodes_per_replica),
        }
    if lrec.nodes_per_replica > 1 and rrec.nodes_per_replica == 1:
        return (
            _("Route %(before)s → %(after)s: every replica now fits inside one machine.") % routes
        )
    return _("Route %(before)s → %(after)s.") % routes


def _throughput_why(before: float, after: float) -> str:
    values = {"before": amount(before), "after": amount(after)}
    if after > before:
        return _("Output throughput at the load rises from %(before)s to %(after)s tok/s.") % values
    return _("Output throughput at the load falls from %(before)s to %(after)s tok/s.") % values


def _why(left: PlanResult, right: PlanResult) -> list[str]:
    """Return the causes the two results show, each read from both results' own values."""
    out: list[str] = []
    lrec, rrec = left.recommendation, right.recommendation
    if lrec.fits and not rrec.fits:
        out.append(_("No layout fits the changed answers any more."))
    elif rrec.fits and not lrec.fits:
        out.append(_("A layout fits with the changed answers."))
    if rrec.fits and rrec.weight_dtype != right.model.requested_weight_dtype:
        out.append(
            _("The %(asked)s weights do not fit: the engine quantized them to %(chosen)s.")
            % {"asked": right.model.requested_weight_dtype, "chosen": rrec.weight_dtype}
        )
    if lrec.fits and rrec.fits and lrec.route != rrec.route:
        out.append(_route_why(lrec, rrec))
    lbest, rbest = left.best, right.best
    if lbest is not None and rbest is not None and lrec.fits and rrec.fits:
        before, after = shown_tok_s(lbest), shown_tok_s(rbest)
        if before is not None and after is not None and amount(before) != amount(after):
            out.append(_throughput_why(before, after))
        if lbest.serves_load != rbest.serves_load:
            out.append(
                _("The layout now holds the target concurrency.")
                if rbest.serves_load
                else _("The layout no longer holds the target concurrency.")
            )
    return out


def change_summary(
    *,
    requested: list[str],
    left_input: Mapping[str, Any],
    right_input: Mapping[str, Any],
    left_spec: Mapping[str, Any],
    right_spec: Mapping[str, Any],
    left_result: PlanResult,
    right_result: PlanResult,
    comparison: Comparison,
) -> ChangeSummary:
    """Return the summary of a what-if: `requested` are the answers asked for (ANSWERS keys)."""
    before = _engine_answers(left_input, left_spec)
    after = _engine_answers(right_input, right_spec)
    answers, already = [], []
    for key, label in ANSWERS.items():
        if key not in before or key not in after:
            continue
        change = Change(key=key, label=str(label), before=before[key], after=after[key])
        if change.before != change.after:
            answers.append(change)
        elif key in requested:
            already.append(change)
    outcome = _outcome(comparison.recommendation) + _outcome(comparison.figures)
    why = _why(left_result, right_result) if outcome else []
    if outcome and not why:
        why = [_("The figures below follow from the changed answers.")]
    return ChangeSummary(
        answers=tuple(answers), already=tuple(already), outcome=outcome, why=tuple(why)
    )


def what_if_summary(
    *,
    plan: Any,
    spec: Mapping[str, Any],
    evaluation: Any,
    comparison: Comparison,
    requested: list[str],
) -> ChangeSummary:
    """Return the summary of a saved plan against its what-if `evaluation` of `spec`."""
    return change_summary(
        requested=requested,
        left_input=plan.engine_input,
        right_input=evaluation.engine_input,
        left_spec=plan.spec,
        right_spec=spec,
        left_result=plan_result(plan),
        right_result=evaluation.result,
        comparison=comparison,
    )
