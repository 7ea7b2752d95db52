"""A list of related objects by id, for the API: bounded, deduplicated and read in one query.

DRF's `PrimaryKeyRelatedField(many=True)` looks each id up with its own query: 20,000 ids in a
body took 22.8 s, and a repeated id came back as many times as it was sent (issue 33).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from rest_framework import serializers

# The largest primary key a database column holds (bigint): a larger id names nothing, and
# PostgreSQL would refuse the query with an error instead of finding no row.
MAX_ID = 2**63 - 1


def default_max_ids() -> int:
    return settings.API_MAX_IDS_PER_LIST


class IdListField(serializers.ManyRelatedField):
    """Ids of objects of `queryset`: at most `max_ids` items (the setting given, or
    API_MAX_IDS_PER_LIST), each an integer id of an existing object; duplicates count once.
    Returns the objects in the order first given."""

    def __init__(
        self,
        *,
        queryset: QuerySet,
        max_ids: Callable[[], int] = default_max_ids,
        **kwargs: Any,
    ) -> None:
        self.max_ids = max_ids
        super().__init__(
            child_relation=serializers.PrimaryKeyRelatedField(queryset=queryset), **kwargs
        )

    def to_internal_value(self, data: Any) -> list[Any]:
        if isinstance(data, (str, dict)) or not hasattr(data, "__iter__"):
            self.fail("not_a_list", input_type=type(data).__name__)
        items = list(data)
        if not self.allow_empty and not items:
            self.fail("empty")
        limit = self.max_ids()
        if len(items) > limit:
            raise serializers.ValidationError(f"At most {limit} ids per list.")
        ids = list(dict.fromkeys(self._id(item) for item in items))
        found = {obj.pk: obj for obj in self.child_relation.get_queryset().filter(pk__in=ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            self.child_relation.fail("does_not_exist", pk_value=missing[0])
        return [found[i] for i in ids]

    def _id(self, item: Any) -> int:
        """Return an id as an int (an integer or its decimal string, as DRF accepts)."""
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            self.child_relation.fail("incorrect_type", data_type=type(item).__name__)
        try:
            value = int(item)
        except ValueError:
            self.child_relation.fail("incorrect_type", data_type=type(item).__name__)
        if not 0 < value <= MAX_ID:
            self.child_relation.fail("does_not_exist", pk_value=str(item)[:30])
        return value
