"""The audit trail, newest first: every change recorded by django-simple-history across models,
plus immutable snapshots (saved plans) whose creation is their whole history."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import CharField, F, QuerySet, Value
from django.db.models.functions import Cast
from simple_history.models import registered_models

# The first of these that a model has names its rows in the audit log.
LABEL_FIELDS = ("hostname", "number", "title", "name", "slug", "username")
ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}
COLUMNS = (
    "history_date",
    "history_type",
    "history_user_id",
    "history_change_reason",
    "audit_source",
    "audit_object_id",
    "audit_label",
)


@dataclass(frozen=True, slots=True)
class AuditSource:
    key: str  # "app_label.model_name"
    verbose_name: Any  # lazy: rendered in the reader's language
    queryset: Any  # callable returning a values() queryset with COLUMNS


def _label_field(model: Any) -> str:
    field_names = {f.name for f in model._meta.concrete_fields}
    return next((f for f in LABEL_FIELDS if f in field_names), "id")


def _history_source(model: Any) -> AuditSource:
    history_model = getattr(model, model._meta.simple_history_manager_attribute).model
    key, label = model._meta.label_lower, _label_field(model)

    def queryset() -> QuerySet:
        # Prefixed names: tracked models have fields called source, label and so on.
        return (
            history_model.objects.order_by()  # no ORDER BY inside a UNION
            .annotate(
                audit_source=Value(key, output_field=CharField()),
                audit_object_id=Cast("id", CharField()),
                audit_label=Cast(label, CharField()),
            )
            .values(*COLUMNS)
        )

    return AuditSource(key=key, verbose_name=model._meta.verbose_name, queryset=queryset)


_snapshot_sources: list[AuditSource] = []


def register_snapshot_source(model: Any, *, date_field: str, user_field: str) -> None:
    """Show an immutable model's creations in the audit log (apps call this in ready())."""
    key, label = model._meta.label_lower, _label_field(model)
    if any(s.key == key for s in _snapshot_sources):
        return

    def queryset() -> QuerySet:
        return (
            model._default_manager.order_by()
            .annotate(
                history_date=F(date_field),
                history_type=Value("+", output_field=CharField()),
                history_user_id=F(user_field),
                history_change_reason=Value("", output_field=CharField()),
                audit_source=Value(key, output_field=CharField()),
                audit_object_id=Cast("id", CharField()),
                audit_label=Cast(label, CharField()),
            )
            .values(*COLUMNS)
        )

    _snapshot_sources.append(
        AuditSource(key=key, verbose_name=model._meta.verbose_name, queryset=queryset)
    )


def audit_sources() -> list[AuditSource]:
    """Return every source of audit rows, sorted by key."""
    sources = [
        _history_source(model)
        for model in registered_models.values()
        if getattr(model._meta, "simple_history_manager_attribute", None)
        and not model._meta.auto_created
    ]
    return sorted(sources + _snapshot_sources, key=lambda s: s.key)


def audit_entries(
    *,
    source_keys: list[str] | None = None,
    user_id: int | None = None,
    action: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet:
    """Return the matching rows of every source as one union of dicts, newest first."""
    parts = []
    for source in audit_sources():
        if source_keys and source.key not in source_keys:
            continue
        qs = source.queryset()
        if user_id is not None:
            qs = qs.filter(history_user_id=user_id)
        if action:
            qs = qs.filter(history_type=action)
        if since:
            qs = qs.filter(history_date__gte=since)
        if until:
            qs = qs.filter(history_date__lt=until)
        parts.append(qs)
    if not parts:
        return get_user_model().objects.none()
    first, *rest = parts
    combined = first.union(*rest, all=True) if rest else first
    return combined.order_by("-history_date")
