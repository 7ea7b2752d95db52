"""The API's pagination: limit/offset with a ceiling on `limit`."""

from rest_framework.pagination import LimitOffsetPagination


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """LimitOffsetPagination whose `limit` is capped (DRF leaves it unbounded by default).

    An unbounded `?limit=` reaches SQL as is: PostgreSQL refuses values beyond bigint and
    SQLite beyond 64 bits (a 500), and a large one would read a whole table in one response.
    """

    max_limit = 1000
