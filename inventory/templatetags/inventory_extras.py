"""Template filters of the inventory pages."""

from django import template
from django.utils.formats import number_format

register = template.Library()


@register.filter
def billions(count: int | None) -> str:
    """Format a parameter count in billions with two significant decimals (8030261248 -> 8.03)."""
    if count is None:
        return ""
    value = count / 1e9
    return number_format(value, decimal_pos=2 if value < 100 else 1)
