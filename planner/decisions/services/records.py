"""Creating and moving decision records through their life: each write locked, validated,
versioned and recorded as a revision."""

import math
from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from planner.decisions.guidance import EVIDENCE_SPECS, EvidenceKind, ResponsibilityKind
from planner.decisions.models import (
    DecisionRecord,
    DecisionRevision,
    EvidenceItem,
    EvidenceSource,
    Responsibility,
    RevisionAction,
    Status,
)
from planner.decisions.pool_prefill import proposal_from_pool_plan
from planner.decisions.prefill import proposal_from_plan
from planner.decisions.revisions import changed_keys, diff, snapshot
from planner.decisions.rules import readiness
from planner.decisions.services.errors import (
    AcceptanceRefused,
    DecisionConflict,
    DecisionReadOnly,
    InvalidTransition,
)
from planner.models import Plan, PoolPlan

# Fields a user edits directly; status, number, version and links change only through actions.
EDITABLE_FIELDS = (
    "title",
    "pool_kind",
    "model_name",
    "route",
    "executor_backend",
    "layout",
    "context",
    "decision_text",
    "alternatives",
    "consequences",
    "verifiable_sentence",
)
EVIDENCE_EDIT_FIELDS = ("threshold", "measured_value", "note")
NUMBER_ATTEMPTS = 10


def _actor_label(actor: Any | None, fallback: str) -> str:
    if actor is not None and getattr(actor, "is_authenticated", False):
        return str(actor.get_username())
    return fallback


def user_or_none(actor: Any | None) -> Any | None:
    return actor if actor is not None and getattr(actor, "is_authenticated", False) else None


def locked_record(decision: DecisionRecord, expected_version: int | None) -> DecisionRecord:
    """Return the locked current row; refuse superseded records and stale versions."""
    current = DecisionRecord.objects.select_for_update().get(pk=decision.pk)
    if current.status == Status.SUPERSEDED:
        raise DecisionReadOnly(
            [
                _("%(label)s is superseded and read-only; edit its successor instead.")
                % {"label": current.label}
            ]
        )
    if expected_version is not None and expected_version != current.version:
        raise DecisionConflict(decision=current, expected_version=expected_version)
    return current


def add_revision(
    decision: DecisionRecord,
    *,
    actor: Any | None,
    action: str,
    before: Mapping[str, Any] | None,
    author_label: str = "",
) -> DecisionRevision:
    """Bump the version, save and append a revision with the full snapshot."""
    signed_in = user_or_none(actor)
    if before is not None:
        decision.version += 1
    decision.updated_at = timezone.now()
    if signed_in is not None:
        decision._history_user = signed_in  # type: ignore[attr-defined]
    decision.save()
    after = snapshot(decision)
    return DecisionRevision.objects.create(
        decision=decision,
        number=decision.version,
        author=signed_in,
        author_label=_actor_label(actor, author_label or "system"),
        action=action,
        changed_fields=changed_keys(before, after),
        snapshot=after,
    )


def _assign(decision: DecisionRecord, fields: Mapping[str, Any]) -> None:
    for name, value in fields.items():
        if name not in EDITABLE_FIELDS:
            raise TypeError(f"DecisionRecord field {name!r} cannot be set here")
        setattr(decision, name, "" if value is None else value)


def _write_rows(
    decision: DecisionRecord,
    *,
    responsibilities: Mapping[str, Mapping[str, Any]] | None,
    evidence: Mapping[str, Mapping[str, Any]] | None,
    actor: Any | None,
) -> None:
    """Apply row edits to the five responsibilities and six evidence items."""
    signed_in = user_or_none(actor)
    for kind, values in (responsibilities or {}).items():
        if kind not in ResponsibilityKind.values:
            raise ValidationError({"responsibilities": _("Unknown responsibility %r.") % kind})
        row = Responsibility.objects.get(decision=decision, kind=kind)
        changed = False
        for name in ("owner", "mechanism"):
            if name in values and (values[name] or "") != getattr(row, name):
                setattr(row, name, (values[name] or "").strip())
                changed = True
        if changed:
            row.full_clean()
            if signed_in is not None:
                row._history_user = signed_in  # type: ignore[attr-defined]
            row.save()
    for kind, values in (evidence or {}).items():
        if kind not in EvidenceKind.values:
            raise ValidationError({"evidence": _("Unknown evidence item %r.") % kind})
        item = EvidenceItem.objects.get(decision=decision, kind=kind)
        changed = False
        for name in EVIDENCE_EDIT_FIELDS:
            if name not in values:
                continue
            value = values[name]
            if name == "note":
                value = value or ""
            elif value is not None:
                value = finite_value(value, field=f"evidence.{kind}.{name}")
            if value != getattr(item, name):
                setattr(item, name, value)
                changed = True
                if name == "measured_value":
                    # A value typed in a form replaces whatever monitoring had filled.
                    item.value_source = EvidenceSource.TYPED if value is not None else ""
                    item.window_start = item.window_end = None
                    item.measured_at = timezone.now() if value is not None else None
                    item.measured_by = signed_in if value is not None else None
        if changed:
            item.full_clean()
            if signed_in is not None:
                item._history_user = signed_in  # type: ignore[attr-defined]
            item.save()


def finite_value(value: Any, *, field: str) -> float:
    """Return `value` as a float; refuse infinities and NaN, which JSON cannot carry."""
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ValidationError({field: _("Enter a finite number of at least 0.")})
    return number


def _next_number() -> int:
    return (DecisionRecord.objects.aggregate(n=Max("number"))["n"] or 0) + 1


def _insert_numbered(decision: DecisionRecord) -> None:
    """Save a new record under the next free number, retrying when a concurrent insert won.

    The unique constraint decides: under PostgreSQL's READ COMMITTED a retry inside a fresh
    savepoint sees the competitor's committed row and takes the number after it.
    """
    for attempt in range(NUMBER_ATTEMPTS):
        decision.number = _next_number()
        try:
            with transaction.atomic():
                decision.save(force_insert=True)
            return
        except IntegrityError:
            if attempt == NUMBER_ATTEMPTS - 1:
                raise
            decision.pk = None


@transaction.atomic
def decision_create(
    *,
    actor: Any,
    title: str,
    plan: Plan | None = None,
    pool_plan: PoolPlan | None = None,
    responsibilities: Mapping[str, Mapping[str, Any]] | None = None,
    evidence: Mapping[str, Mapping[str, Any]] | None = None,
    authors: Iterable[Any] | None = None,
    **fields: Any,
) -> DecisionRecord:
    """Create a proposed record with its five responsibility rows and six evidence items."""
    decision = DecisionRecord(
        title=title, plan=plan, pool_plan=pool_plan, created_by=actor, status=Status.PROPOSED
    )
    _assign(decision, fields)
    decision.full_clean(exclude=["number"])
    decision._history_user = actor  # type: ignore[attr-defined]
    _insert_numbered(decision)
    Responsibility.objects.bulk_create(
        Responsibility(decision=decision, kind=kind) for kind in ResponsibilityKind.values
    )
    EvidenceItem.objects.bulk_create(
        EvidenceItem(decision=decision, kind=kind, unit=EVIDENCE_SPECS[kind].unit)
        for kind in EvidenceKind.values
    )
    decision.authors.set(list(authors) if authors is not None else [actor])
    _write_rows(decision, responsibilities=responsibilities, evidence=evidence, actor=actor)
    add_revision(decision, actor=actor, action=RevisionAction.CREATED, before=None)
    return decision


@transaction.atomic
def decision_create_from_plan(*, plan: Plan, actor: Any, **overrides: Any) -> DecisionRecord:
    """Create a proposed record prefilled from `plan` (overrides win over the proposal)."""
    return _create_proposed(proposal_from_plan(plan), actor, overrides, plan=plan)


def _create_proposed(
    proposal: dict[str, Any], actor: Any, overrides: dict[str, Any], **source: Any
) -> DecisionRecord:
    """Create the record a prefill proposed, linked to its `source` (overrides win)."""
    proposal.pop("estimates", None)
    responsibilities = overrides.pop("responsibilities", None) or proposal.pop("responsibilities")
    proposal.pop("responsibilities", None)
    proposal.update(overrides)
    return decision_create(actor=actor, responsibilities=responsibilities, **source, **proposal)


@transaction.atomic
def decision_create_from_pool_plan(
    *, pool_plan: PoolPlan, actor: Any, **overrides: Any
) -> DecisionRecord:
    """Create a proposed record prefilled from a pool plan (overrides win over the proposal)."""
    return _create_proposed(
        proposal_from_pool_plan(pool_plan), actor, overrides, pool_plan=pool_plan
    )


@transaction.atomic
def decision_update(
    *,
    decision: DecisionRecord,
    actor: Any,
    expected_version: int,
    responsibilities: Mapping[str, Mapping[str, Any]] | None = None,
    evidence: Mapping[str, Mapping[str, Any]] | None = None,
    authors: Iterable[Any] | None = None,
    **fields: Any,
) -> DecisionRecord:
    """Edit a record the caller read at `expected_version`; raise DecisionConflict otherwise.

    An accepted record stays editable (evidence arrives later) but must stay complete.
    """
    current = locked_record(decision, expected_version)
    before = snapshot(current)
    _assign(current, fields)
    current.full_clean()
    current.save()
    if authors is not None:
        current.authors.set(list(authors))
    _write_rows(current, responsibilities=responsibilities, evidence=evidence, actor=actor)
    after = snapshot(current)
    if not diff(before, after):
        return current
    if current.status == Status.ACCEPTED:
        blocking = readiness(current).blocking
        if blocking:
            raise AcceptanceRefused([_("An accepted record must stay complete:"), *blocking])
    add_revision(current, actor=actor, action=RevisionAction.EDITED, before=before)
    return current


@transaction.atomic
def decision_accept(
    *,
    decision: DecisionRecord,
    actor: Any,
    with_open_evidence: bool = False,
    expected_version: int | None = None,
) -> DecisionRecord:
    """Accept a proposed record; refuse with every missing item listed.

    Missing or failing measurements need `with_open_evidence=True`, which stays on the record.
    """
    current = locked_record(decision, expected_version)
    if current.status != Status.PROPOSED:
        raise InvalidTransition(
            [
                _("Only a proposed record can be accepted; %(label)s is %(status)s.")
                % {"label": current.label, "status": current.get_status_display()}
            ]
        )
    state = readiness(current)
    if state.blocking:
        raise AcceptanceRefused(state.blocking)
    if state.open_evidence and not with_open_evidence:
        raise AcceptanceRefused(
            [
                *state.open_evidence,
                _("Measure these first, or accept explicitly “with open evidence”."),
            ]
        )
    before = snapshot(current)
    current.status = Status.ACCEPTED
    current.accepted_with_open_evidence = bool(state.open_evidence)
    current.decided_at = timezone.now()
    current.decided_by = actor
    current.full_clean()
    add_revision(current, actor=actor, action=RevisionAction.ACCEPTED, before=before)
    return current


@transaction.atomic
def decision_reject(
    *, decision: DecisionRecord, actor: Any, expected_version: int | None = None
) -> DecisionRecord:
    """Reject a proposed record."""
    current = locked_record(decision, expected_version)
    if current.status != Status.PROPOSED:
        raise InvalidTransition(
            [
                _("Only a proposed record can be rejected; %(label)s is %(status)s.")
                % {"label": current.label, "status": current.get_status_display()}
            ]
        )
    before = snapshot(current)
    current.status = Status.REJECTED
    current.decided_at = timezone.now()
    current.decided_by = actor
    add_revision(current, actor=actor, action=RevisionAction.REJECTED, before=before)
    return current


@transaction.atomic
def decision_supersede(
    *,
    decision: DecisionRecord,
    superseded_by: DecisionRecord,
    actor: Any,
    expected_version: int | None = None,
) -> DecisionRecord:
    """Mark an accepted record superseded by another; both get a revision, the old is frozen."""
    current = locked_record(decision, expected_version)
    successor = DecisionRecord.objects.select_for_update().get(pk=superseded_by.pk)
    if current.status != Status.ACCEPTED:
        raise InvalidTransition(
            [
                _("Only an accepted record can be superseded; %(label)s is %(status)s.")
                % {"label": current.label, "status": current.get_status_display()}
            ]
        )
    if successor.pk == current.pk:
        raise InvalidTransition([_("A record cannot supersede itself.")])
    if successor.status in (Status.SUPERSEDED, Status.REJECTED):
        raise InvalidTransition(
            [
                _("%(label)s is %(status)s and cannot supersede another record.")
                % {"label": successor.label, "status": successor.get_status_display()}
            ]
        )
    before_old, before_new = snapshot(current), snapshot(successor)
    current.status = Status.SUPERSEDED
    current.superseded_by = successor
    current.full_clean()
    add_revision(current, actor=actor, action=RevisionAction.SUPERSEDED, before=before_old)
    add_revision(successor, actor=actor, action=RevisionAction.SUPERSEDES, before=before_new)
    current.refresh_from_db()
    return current


@transaction.atomic
def decision_draft_successor(*, decision: DecisionRecord, actor: Any) -> DecisionRecord:
    """Create a proposed copy of `decision` to edit into its successor (links on supersede)."""
    source = DecisionRecord.objects.get(pk=decision.pk)
    fields = {name: getattr(source, name) for name in EDITABLE_FIELDS}
    fields["title"] = _("%(title)s (revised)") % {"title": source.title}
    fields["title"] = fields["title"][:200]
    fields["context"] = (
        _("Successor of %(label)s.") % {"label": source.label} + "\n\n" + source.context
    ).strip()
    return decision_create(
        actor=actor,
        plan=source.plan,
        responsibilities={
            r.kind: {"owner": r.owner, "mechanism": r.mechanism}
            for r in source.responsibilities.all()
        },
        evidence={e.kind: {"threshold": e.threshold} for e in source.evidence_items.all()},
        **fields,
    )
