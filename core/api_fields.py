"""DRF helpers every API uses for nested rows."""

from typing import Any

from rest_framework import serializers


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
