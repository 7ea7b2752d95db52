"""The audit trail: every change recorded by django-simple-history, across models, newest first."""

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import CharField, QuerySet, Value
from django.db.models.functions import Cast
from simple_history.models import registered_models

# The first of these that a model has names its rows in the audit log.
LABEL_FIELDS = ("hostname", "number", "title", "name", "slug")
ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}


@dataclass(frozen=True, slots=True)
class AuditSource:
    key: str  # "app_label.model_name"
    verbose_name: str
    history_model: type
    label_field: str


def audit_sources() -> list[AuditSource]:
    """Return one source per model tracked by simple_history, sorted by name."""
    sources = []
    for model in registered_models.values():
        manager_name = getattr(model._meta, "simple_history_manager_attribute", None)
        if manager_name is None or model._meta.auto_created:
            continue
        field_names = {f.name for f in model._meta.concrete_fields}
        label = next((f for f in LABEL_FIELDS if f in field_names), "id")
        sources.append(
            AuditSource(
                key=model._meta.label_lower,
                verbose_name=str(model._meta.verbose_name),
                history_model=getattr(model, manager_name).model,
                label_field=label,
            )
        )
    return sorted(sources, key=lambda s: s.key)


def audit_entries(
    *,
    source_keys: list[str] | None = None,
    user_id: int | None = None,
    action: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet:
    """Return the matching history rows of every source as one union of dicts, newest first."""
    parts = []
    for source in audit_sources():
        if source_keys and source.key not in source_keys:
            continue
        qs = source.history_model.objects.order_by()  # no ORDER BY inside a UNION
        if user_id is not None:
            qs = qs.filter(history_user_id=user_id)
        if action:
            qs = qs.filter(history_type=action)
        if since:
            qs = qs.filter(history_date__gte=since)
        if until:
            qs = qs.filter(history_date__lt=until)
        parts.append(
            # Prefixed names: tracked models have fields called source, label and so on.
            qs.annotate(
                audit_source=Value(source.key, output_field=CharField()),
                audit_object_id=Cast("id", CharField()),
                audit_label=Cast(source.label_field, CharField()),
            ).values(
                "history_date",
                "history_type",
                "history_user_id",
                "history_change_reason",
                "audit_source",
                "audit_object_id",
                "audit_label",
            )
        )
    if not parts:
        return get_user_model().objects.none()
    first, *rest = parts
    combined = first.union(*rest, all=True) if rest else first
    return combined.order_by("-history_date")
