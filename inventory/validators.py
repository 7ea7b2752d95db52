"""Field validators whose messages name the field and the allowed range."""

import re
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.deconstruct import deconstructible
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from catalog import identifiers
from catalog.bounds import GPUS_PER_NODE_MAX

# fullmatch, not match with `$`: `$` also matches before a trailing newline ("slug\n").
_MODEL_SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
_TAG = re.compile(r"[\w.:/+-]{1,50}")

GPU_COUNT_MIN = 1
GPU_COUNT_MAX = GPUS_PER_NODE_MAX  # the planner's bound (catalog/bounds.py)


def validate_hostname(value: str) -> None:
    """Refuse a host name that is not a valid RFC 1123 name."""
    if not identifiers.is_hostname(value):
        raise ValidationError(
            _(
                "Hostname %(value)s is not a valid RFC 1123 name: labels of 1–63 letters, digits "
                "or hyphens, separated by dots, 253 characters at most."
            ),
            code="invalid_hostname",
            params={"value": repr(value)},
        )


def validate_address(value: str) -> None:
    """Refuse a management address that is neither an IP address nor an RFC 1123 host name."""
    if value and not identifiers.is_address(value):
        raise ValidationError(
            _("Management address %(value)s must be an IPv4/IPv6 address or a host name."),
            code="invalid_address",
            params={"value": repr(value)},
        )


def validate_interface_name(value: str) -> None:
    """Refuse a network interface name that Linux would not accept."""
    if not identifiers.is_interface_name(value or ""):
        raise ValidationError(
            _(
                "Interface name %(value)s must be 1–15 characters of letters, digits, '.', '_', "
                "':', '@' or '-' (as in eth1, ens3f0, ib0)."
            ),
            code="invalid_interface_name",
            params={"value": repr(value)},
        )


def validate_model_slug(value: str) -> None:
    """Refuse a model slug other than lower-case letters, digits, '.', '_' and '-'."""
    if not _MODEL_SLUG.fullmatch(value or ""):
        raise ValidationError(
            _(
                "Slug %(value)s must be 1–100 lower-case letters, digits, '.', '_' or '-', "
                "starting with a letter or digit."
            ),
            code="invalid_slug",
            params={"value": repr(value)},
        )


def normalize_tags(value: str | list[str] | None) -> str:
    """Return tags as one comma-separated string without blanks or duplicates."""
    if value is None:
        return ""
    parts = value if isinstance(value, list) else re.split(r"[,\s]+", value)
    seen: dict[str, None] = {}
    for part in parts:
        tag = str(part).strip()
        if tag:
            seen.setdefault(tag, None)
    return ",".join(seen)


def validate_tags(value: str) -> None:
    """Refuse tags with characters other than letters, digits and . : / + - _."""
    bad = [tag for tag in normalize_tags(value).split(",") if tag and not _TAG.fullmatch(tag)]
    if bad:
        raise ValidationError(
            _("Tags may hold letters, digits and . : / + - _ (50 characters each); bad: %(bad)s"),
            code="invalid_tags",
            params={"bad": ", ".join(bad)},
        )


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@deconstructible
class GreaterThanValidator:
    """Refuse values less than or equal to `limit`, naming the field in the message."""

    code = "greater_than"

    def __init__(self, limit: float, label: Any) -> None:
        self.limit = limit
        self.label = label

    def __call__(self, value: Any) -> None:
        if value is not None and value <= self.limit:
            raise ValidationError(
                _("%(label)s must be greater than %(limit)s (got %(value)s)."),
                code=self.code,
                params={"label": self.label, "limit": self.limit, "value": _number(value)},
            )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GreaterThanValidator)
            and self.limit == other.limit
            and str(self.label) == str(other.label)
        )

    def __hash__(self) -> int:
        return hash((self.limit, str(self.label)))


def range_validators(label: Any, low: int, high: int | None = None) -> list[Any]:
    """Return min/max validators whose message names the field and the whole allowed range."""
    if high is None:
        message = format_lazy(_("{label} must be at least {low}."), label=label, low=low)
        return [MinValueValidator(low, message=message)]
    message = format_lazy(
        _("{label} must be between {low} and {high}."), label=label, low=low, high=high
    )
    return [MinValueValidator(low, message=message), MaxValueValidator(high, message=message)]


def positive_validators(label: Any, high: float) -> list[Any]:
    """Return validators of a figure in (0, high], naming the field and the range.

    `high` is one of the planner's bounds (catalog/bounds.py): a stored figure beyond it would
    make every plan on it fail, and sums over the fleet overflow.
    """
    message = format_lazy(
        _("{label} must be greater than 0 and at most {high}."), label=label, high=_number(high)
    )
    return [GreaterThanValidator(0, label), MaxValueValidator(high, message=message)]
