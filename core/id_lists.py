"""Lists of related objects in API bodies, by id or by name: bounded, deduplicated and read in
one query.

DRF's `PrimaryKeyRelatedField(many=True)` and `SlugRelatedField(many=True)` look each element up
with its own query: 20,000 ids in a body took 22.8 s, and a repeated element came back as many
times as it was sent (issue 33).
"""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Hashable
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from rest_framework import serializers

# The largest primary key a database column holds (bigint): a larger id names nothing, and
# PostgreSQL would refuse the query with an error instead of finding no row.
MAX_ID = 2**63 - 1


def default_max_ids() -> int:
    return settings.API_MAX_IDS_PER_LIST


class _RelatedList(serializers.ManyRelatedField, metaclass=ABCMeta):
    """At most `max_items()` elements, each naming an existing object by `lookup`; duplicates
    count once. Returns the objects in the order first given. Subclasses read one element."""

    lookup = "pk"

    def __init__(self, *, max_items: Callable[[], int], **kwargs: Any) -> None:
        self.max_items = max_items
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:
        if isinstance(data, (str, dict)) or not hasattr(data, "__iter__"):
            self.fail("not_a_list", input_type=type(data).__name__)
        items = list(data)
        if not self.allow_empty and not items:
            self.fail("empty")
        limit = self.max_items()
        if len(items) > limit:
            raise serializers.ValidationError(self.too_many(limit))
        keys = list(dict.fromkeys(self._key(item) for item in items))
        queryset = self.child_relation.get_queryset().filter(**{f"{self.lookup}__in": keys})
        found = {getattr(obj, self.lookup): obj for obj in queryset}
        missing = [key for key in keys if key not in found]
        if missing:
            self._missing(missing[0])
        return [found[key] for key in keys]

    @abstractmethod
    def too_many(self, limit: int) -> str:
        """Return the message for a list longer than `limit`."""

    @abstractmethod
    def _key(self, item: Any) -> Hashable:
        """Return the lookup value of one element, or fail naming its type."""

    @abstractmethod
    def _missing(self, key: Any) -> None:
        """Fail for the first element no object matches."""


class IdListField(_RelatedList):
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
        super().__init__(
            max_items=max_ids,
            child_relation=serializers.PrimaryKeyRelatedField(queryset=queryset),
            **kwargs,
        )

    def too_many(self, limit: int) -> str:
        return _("At most %(limit)s ids per list.") % {"limit": limit}

    def _key(self, item: Any) -> int:
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

    def _missing(self, key: Any) -> None:
        self.child_relation.fail("does_not_exist", pk_value=key)


class SlugListField(_RelatedList):
    """Names (`slug_field`) of objects of `queryset`, such as a decision's authors by user
    name: at most `max_items()` distinct names of existing objects; duplicates count once."""

    def __init__(
        self,
        *,
        queryset: QuerySet,
        slug_field: str,
        max_items: Callable[[], int] = default_max_ids,
        **kwargs: Any,
    ) -> None:
        self.lookup = slug_field
        child = serializers.SlugRelatedField(slug_field=slug_field, queryset=queryset)
        super().__init__(max_items=max_items, child_relation=child, **kwargs)

    def too_many(self, limit: int) -> str:
        return _("At most %(limit)s names per list.") % {"limit": limit}

    def _key(self, item: Any) -> str:
        if not isinstance(item, str):
            self.child_relation.fail("invalid")
        return item

    def _missing(self, key: Any) -> None:
        self.child_relation.fail("does_not_exist", slug_name=self.lookup, value=key[:150])
