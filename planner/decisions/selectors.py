"""Reads of decision records for pages, the API and other apps."""

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404

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


def evidence_threshold(decision: DecisionRecord, item_kind: str) -> float | None:
    """Return the team's threshold for one evidence kind (for alert rules), or None."""
    item = EvidenceItem.objects.filter(decision=decision, kind=item_kind).first()
    return item.threshold if item else None


def decisions_with_evidence() -> QuerySet[DecisionRecord]:
    """Return records monitoring may fill evidence for (not superseded), with their items."""
    return DecisionRecord.objects.exclude(status="superseded").prefetch_related(
        Prefetch("evidence_items", queryset=EvidenceItem.objects.order_by("kind"))
    )
