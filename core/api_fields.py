"""DRF fields and mixins every API uses for lists of related objects and nested rows."""

from typing import Any

from django.db.models import Model, QuerySet
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


@extend_schema_field({"type": "array", "items": {"type": "string"}})
class BulkSlugListField(serializers.Field):
    """A list of objects named by a slug field: deduplicated, capped, looked up in one query.

    DRF's SlugRelatedField(many=True) runs one SELECT per element and keeps duplicates, so a
    2.5 MB body of names cost a query each. This field refuses more than `max_items` distinct
    names, keeps the first occurrence of each, and answers the unknown ones together.
    """

    default_error_messages = {
        "not_a_list": _("Expected a list of names."),
        "too_many": _("At most {max} distinct entries, got {count}."),
        "unknown": _("Unknown: {names}."),
    }

    def __init__(
        self, *, queryset: QuerySet[Any], slug_field: str, max_items: int, **kwargs: Any
    ) -> None:
        self.queryset = queryset
        self.slug_field = slug_field
        self.max_items = max_items
        self.name_field = serializers.CharField(max_length=255)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[Model]:
        if isinstance(data, str | bytes) or not isinstance(data, list | tuple):
            self.fail("not_a_list")
        names = list(dict.fromkeys(self.name_field.run_validation(item) for item in data))
        if len(names) > self.max_items:
            self.fail("too_many", max=self.max_items, count=len(names))
        found = {
            getattr(obj, self.slug_field): obj
            for obj in self.queryset.filter(**{f"{self.slug_field}__in": names})
        }
        unknown = [name for name in names if name not in found]
        if unknown:
            self.fail("unknown", names=", ".join(unknown[:10]))
        return [found[name] for name in names]

    def to_representation(self, value: Any) -> list[str]:
        objects = value.all() if hasattr(value, "all") else value
        return [getattr(obj, self.slug_field) for obj in objects]


class CompleteRowsMixin:
    """Require every required field of a nested row, even inside a PATCH.

    A PATCH's `partial` flag reaches the nested serializers, which then let `{}` through; the
    rows of a list that replaces the whole list must be complete all the same.
    """

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        fields = self.fields  # type: ignore[attr-defined]
        missing = {
            name: [field.error_messages["required"]]
            for name, field in fields.items()
            if field.required and not field.read_only and name not in attrs
        }
        if missing:
            raise serializers.ValidationError(missing)
        return super().validate(attrs)  # type: ignore[misc]
