"""What a decision record needs before it can be accepted."""

from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from planner.decisions.guidance import EVIDENCE_SPECS, EvidenceKind, ResponsibilityKind
from planner.decisions.models import DecisionRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class Readiness:
    """Blocking problems refuse acceptance; open evidence needs the explicit flag."""

    blocking: list[str] = field(default_factory=list)
    open_evidence: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.blocking

    @property
    def all_evidence_passes(self) -> bool:
        return not self.open_evidence


def readiness(decision: DecisionRecord) -> Readiness:
    """Return every reason `decision` cannot be accepted yet, in the order of the document."""
    blocking: list[str] = []
    open_evidence: list[str] = []
    rows = {r.kind: r for r in decision.responsibilities.all()}
    for kind, label in ResponsibilityKind.choices:
        row = rows.get(kind)
        if row is None or not row.owner.strip():
            blocking.append(_("“%(row)s” has no owner.") % {"row": label})
        if row is None or not row.mechanism.strip():
            blocking.append(_("“%(row)s” has no mechanism.") % {"row": label})
    if not decision.verifiable_sentence.strip():
        blocking.append(_("The verifiable sentence is missing."))
    items = {e.kind: e for e in decision.evidence_items.all()}
    for kind, label in EvidenceKind.choices:
        item = items.get(kind)
        if not EVIDENCE_SPECS[kind].required and (item is None or item.threshold is None):
            continue  # optional evidence (GPU utilisation) is shown, not demanded
        if item is None or item.threshold is None:
            blocking.append(_("“%(item)s” has no threshold.") % {"item": label})
            continue
        if item.measured_value is None:
            open_evidence.append(_("“%(item)s” has no measurement.") % {"item": label})
        elif item.passed is False:
            open_evidence.append(
                _(
                    "“%(item)s” fails: measured %(value)s %(unit)s, "
                    "threshold %(cmp)s %(limit)s %(unit)s."
                )
                % {
                    "item": label,
                    "value": f"{item.measured_value:g}",
                    "unit": item.unit,
                    "cmp": item.comparison,
                    "limit": f"{item.threshold:g}",
                }
            )
    return Readiness(blocking=blocking, open_evidence=open_evidence)
