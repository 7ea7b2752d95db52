"""Snapshots of a decision record and the differences between two of them."""

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from planner.decisions.guidance import EvidenceKind, ResponsibilityKind
from planner.decisions.models import DecisionRecord, format_number

# Document fields in the order a reader meets them.
DOCUMENT_FIELDS = (
    "title",
    "status",
    "pool_kind",
    "model_name",
    "route",
    "executor_backend",
    "layout",
    "context",
    "decision_text",
    "verifiable_sentence",
    "alternatives",
    "consequences",
)
EVIDENCE_FIELDS = (
    "threshold",
    "measured_value",
    "unit",
    "source",
    "window_start",
    "window_end",
    "note",
)
MULTILINE_FIELDS = {
    "context",
    "decision_text",
    "alternatives",
    "consequences",
    "verifiable_sentence",
}


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def snapshot(decision: DecisionRecord) -> dict[str, Any]:
    """Return the whole document of `decision` as a JSON-able dict."""
    data: dict[str, Any] = {name: getattr(decision, name) for name in DOCUMENT_FIELDS}
    data["number"] = decision.number
    data["plan"] = str(decision.plan.public_id) if decision.plan_id else None
    data["authors"] = sorted(u.get_username() for u in decision.authors.all())
    data["accepted_with_open_evidence"] = decision.accepted_with_open_evidence
    data["decided_at"] = _iso(decision.decided_at)
    data["superseded_by"] = (
        format_number(decision.superseded_by.number) if decision.superseded_by_id else None
    )
    data["supersedes"] = sorted(format_number(d.number) for d in decision.supersedes.all())
    data["responsibilities"] = {
        r.kind: {"owner": r.owner, "mechanism": r.mechanism}
        for r in decision.ordered_responsibilities()
    }
    data["evidence"] = {
        e.kind: {
            "threshold": e.threshold,
            "measured_value": e.measured_value,
            "unit": e.unit,
            "source": e.value_source,
            "window_start": _iso(e.window_start),
            "window_end": _iso(e.window_end),
            "note": e.note,
        }
        for e in decision.ordered_evidence()
    }
    return data


def _field_label(name: str) -> str:
    if name in ("plan", "authors", "superseded_by", "decided_at", "accepted_with_open_evidence"):
        return str(DecisionRecord._meta.get_field(name).verbose_name)
    if name == "supersedes":
        return _("supersedes")
    return str(DecisionRecord._meta.get_field(name).verbose_name)


def flatten(data: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    """Return {key: (label, value)} for every leaf of a snapshot, in document order."""
    out: dict[str, tuple[str, Any]] = {}
    for name in (
        *DOCUMENT_FIELDS,
        "plan",
        "authors",
        "accepted_with_open_evidence",
        "decided_at",
        "superseded_by",
        "supersedes",
    ):
        if name in data:
            value = data[name]
            if isinstance(value, list):
                value = ", ".join(value)
            out[name] = (_field_label(name), value)
    responsibilities = data.get("responsibilities") or {}
    for kind, label in ResponsibilityKind.choices:
        row = responsibilities.get(kind) or {}
        out[f"responsibilities.{kind}.owner"] = ((f"{label} — " + _("owner")), row.get("owner", ""))
        out[f"responsibilities.{kind}.mechanism"] = (
            (f"{label} — " + _("mechanism")),
            row.get("mechanism", ""),
        )
    evidence = data.get("evidence") or {}
    names = {
        "threshold": _("threshold"),
        "measured_value": _("measured value"),
        "unit": _("unit"),
        "source": _("source"),
        "window_start": _("window start"),
        "window_end": _("window end"),
        "note": _("note"),
    }
    for kind, label in EvidenceKind.choices:
        item = evidence.get(kind) or {}
        for name in EVIDENCE_FIELDS:
            out[f"evidence.{kind}.{name}"] = (f"{label} — {names[name]}", item.get(name))
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldChange:
    """One changed field: its label, both values and, for long text, a line diff."""

    key: str
    label: str
    old: Any
    new: Any
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" ", "+", "-"), text


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldChange]:
    """Return the fields that differ between two snapshots, in document order."""
    before, after = flatten(old), flatten(new)
    changes = []
    for key, (label, new_value) in after.items():
        old_value = before.get(key, (label, None))[1]
        if _text(old_value) == _text(new_value):
            continue
        lines: list[tuple[str, str]] = []
        if key in MULTILINE_FIELDS or "mechanism" in key or key.endswith(".note"):
            for line in difflib.ndiff(_text(old_value).splitlines(), _text(new_value).splitlines()):
                if line.startswith("? "):
                    continue
                lines.append((line[0], line[2:]))
        changes.append(FieldChange(key=key, label=label, old=old_value, new=new_value, lines=lines))
    return changes


def field_labels() -> dict[str, str]:
    """Return {key: label} for every key a revision's `changed_fields` can hold."""
    top = dict.fromkeys(
        (
            *DOCUMENT_FIELDS,
            "plan",
            "authors",
            "accepted_with_open_evidence",
            "decided_at",
            "superseded_by",
            "supersedes",
        ),
        "",
    )
    return {key: label for key, (label, _value) in flatten(top).items()}


def changed_keys(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[str]:
    """Return the keys that changed (all non-empty keys for a first revision)."""
    if old is None:
        return [k for k, (_label, v) in flatten(new).items() if _text(v)]
    return [c.key for c in diff(old, new)]
