"""Reads of decision records for pages, the API and other apps."""

from dataclasses import dataclass

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from planner.decisions.guidance import UNIT_FACTORS, EvidenceKind
from planner.decisions.models import DecisionRecord, DecisionRevision, EvidenceItem
from planner.decisions.revisions import FieldChange, diff


def decision_list() -> QuerySet[DecisionRecord]:
    """Return every record with what a list row shows, in a fixed number of queries."""
    return DecisionRecord.objects.for_list()


def decision_get(number: int) -> DecisionRecord:
    """Return one record with its rows, links and plan, or raise Http404."""
    return get_object_or_404(
        DecisionRecord.objects.for_list().select_related("decided_by"), number=number
    )


def revision_diff(
    decision: DecisionRecord, a: int, b: int
) -> tuple[DecisionRevision, DecisionRevision, list[FieldChange]]:
    """Return revisions `a` and `b` of `decision` and the changes from a to b."""
    old = get_object_or_404(DecisionRevision, decision=decision, number=a)
    new = get_object_or_404(DecisionRevision, decision=decision, number=b)
    return old, new, diff(old.snapshot, new.snapshot)


@dataclass(frozen=True, slots=True, kw_only=True)
class LatencySlo:
    """The decision's latency thresholds (evidence items), in milliseconds."""

    ttft_p95_ms: float | None
    itl_p95_ms: float | None


def _threshold_ms(item: EvidenceItem | None) -> float | None:
    if item is None or item.threshold is None:
        return None
    factor = UNIT_FACTORS.get((item.unit, "ms"))
    return None if factor is None else item.threshold * factor


def latency_slo(decision_id: int | None) -> LatencySlo:
    """Return the TTFT and ITL p95 thresholds of a decision record (None where unset)."""
    if decision_id is None:
        return LatencySlo(ttft_p95_ms=None, itl_p95_ms=None)
    items = {
        i.kind: i
        for i in EvidenceItem.objects.filter(
            decision_id=decision_id, kind__in=(EvidenceKind.TTFT_P95, EvidenceKind.ITL_P95)
        )
    }
    return LatencySlo(
        ttft_p95_ms=_threshold_ms(items.get(EvidenceKind.TTFT_P95)),
        itl_p95_ms=_threshold_ms(items.get(EvidenceKind.ITL_P95)),
    )


def evidence_items(decision_id: int) -> dict[str, EvidenceItem]:
    """Return a decision's evidence items by kind."""
    return {i.kind: i for i in EvidenceItem.objects.filter(decision_id=decision_id)}
