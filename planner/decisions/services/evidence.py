"""Measured values on a record's evidence items: typed by a user or filled by monitoring over a
time window, converted to the item's unit.
"""

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from planner.decisions.guidance import EVIDENCE_SPECS, UNIT_FACTORS, EvidenceKind
from planner.decisions.models import DecisionRecord, EvidenceItem, EvidenceSource, RevisionAction
from planner.decisions.revisions import snapshot
from planner.decisions.services.records import (
    add_revision,
    finite_value,
    locked_record,
    user_or_none,
)


def convert_unit(value: float, *, unit: str, kind: str) -> float:
    """Return `value` in the evidence kind's unit; raise ValidationError for unknown units."""
    target = EVIDENCE_SPECS[kind].unit
    factor = UNIT_FACTORS.get((unit, target))
    if factor is None:
        raise ValidationError(
            {
                "unit": _("Unit %(unit)s cannot be converted to %(target)s.")
                % {"unit": unit, "target": target}
            }
        )
    return value * factor


@transaction.atomic
def record_evidence_measurement(
    *,
    decision: DecisionRecord,
    item_kind: str,
    value: float,
    unit: str,
    source: str = EvidenceSource.MONITORING,
    window_start: datetime | None = None,
    window_end: datetime | None = None,
    note: str = "",
    actor: Any | None = None,
    expected_version: int | None = None,
) -> EvidenceItem:
    """Store one measured value on a record's evidence item and add a revision.

    This is the entry point for monitoring: it passes the series value over a time window
    (source "monitoring", window required) in any unit of UNIT_FACTORS ("ms"/"s", "%"/"ratio");
    the value is converted to the item's unit. Works on proposed and accepted records; a
    superseded record refuses (DecisionReadOnly). `user` may be None for a background task.
    """
    if item_kind not in EvidenceKind.values:
        raise ValidationError(
            {
                "item_kind": _("Unknown evidence item %(kind)s; allowed: %(allowed)s.")
                % {"kind": item_kind, "allowed": ", ".join(EvidenceKind.values)}
            }
        )
    if source not in EvidenceSource.values:
        raise ValidationError({"source": _("Source must be typed or monitoring.")})
    if source == EvidenceSource.MONITORING and (window_start is None or window_end is None):
        raise ValidationError(
            {"window_start": _("A value from monitoring needs the time window it covers.")}
        )
    if window_start and window_end and window_end < window_start:
        raise ValidationError({"window_end": _("The window ends before it starts.")})
    current = locked_record(decision, expected_version)
    before = snapshot(current)
    item = EvidenceItem.objects.get(decision=current, kind=item_kind)
    item.measured_value = finite_value(
        convert_unit(float(value), unit=unit, kind=item_kind), field="value"
    )
    item.value_source = source
    item.window_start = window_start
    item.window_end = window_end
    item.note = note or ""
    item.measured_at = timezone.now()
    item.measured_by = user_or_none(actor)
    item.full_clean()
    if item.measured_by is not None:
        item._history_user = item.measured_by  # type: ignore[attr-defined]
    item.save()
    add_revision(
        current,
        actor=actor,
        action=RevisionAction.EVIDENCE,
        before=before,
        author_label=source,
    )
    return item
