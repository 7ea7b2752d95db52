"""plotly.js and its own texts in the reader's language: modebar tooltips, month and day names.

{% load plotly_i18n %} then {% plotly_js %}: plotly.js, deferred, and for a language other than
English its translations as JSON (json_script) with static/js/plotly-locale.js, which registers
them as a Plotly locale before the page's charts are drawn (no inline script).
"""

from typing import Any

from django import template
from django.templatetags.static import static
from django.utils.dates import MONTHS, WEEKDAYS
from django.utils.html import format_html, json_script
from django.utils.translation import get_language, pgettext

register = template.Library()


def _dictionary() -> dict[str, str]:
    """Return the modebar and hover texts of plotly.js 4 (the English it shows, as keys)."""
    return {
        "Autoscale": pgettext("plotly", "Autoscale"),
        "Box Select": pgettext("plotly", "Box Select"),
        "Click to enter Colorscale title": pgettext("plotly", "Click to enter Colorscale title"),
        "Compare data on hover": pgettext("plotly", "Compare data on hover"),
        "Double-click on legend to isolate one trace": pgettext(
            "plotly", "Double-click on legend to isolate one trace"
        ),
        "Double-click to zoom back out": pgettext("plotly", "Double-click to zoom back out"),
        "Download plot as a PNG": pgettext("plotly", "Download plot as a PNG"),
        "Download plot": pgettext("plotly", "Download plot"),
        "Lasso Select": pgettext("plotly", "Lasso Select"),
        "Pan": pgettext("plotly", "Pan"),
        "Produced with Plotly.js": pgettext("plotly", "Produced with Plotly.js"),
        "Reset axes": pgettext("plotly", "Reset axes"),
        "Reset view": pgettext("plotly", "Reset view"),
        "Reset": pgettext("plotly", "Reset"),
        "Share chart": pgettext("plotly", "Share chart"),
        "Share chart...": pgettext("plotly", "Share chart..."),
        "Show closest data on hover": pgettext("plotly", "Show closest data on hover"),
        "Toggle Spike Lines": pgettext("plotly", "Toggle Spike Lines"),
        "Zoom": pgettext("plotly", "Zoom"),
        "Zoom in": pgettext("plotly", "Zoom in"),
        "Zoom out": pgettext("plotly", "Zoom out"),
    }


def _format() -> dict[str, Any]:
    """Return Plotly's date vocabulary and formats (d3 time-format directives)."""
    sunday_first = [6, 0, 1, 2, 3, 4, 5]  # Django counts from Monday, Plotly from Sunday
    days = [str(WEEKDAYS[i]) for i in sunday_first]
    months = [str(MONTHS[i]) for i in range(1, 13)]
    return {
        "days": days,
        "shortDays": days,
        "months": months,
        "shortMonths": months,
        "date": pgettext("plotly date format", "%m/%d/%Y"),
        "year": pgettext("plotly date format", "%Y"),
        "month": pgettext("plotly date format", "%b %Y"),
        "dayMonth": pgettext("plotly date format", "%b %-d"),
        "dayMonthYear": pgettext("plotly date format", "%b %-d, %Y"),
    }


@register.simple_tag
def plotly_locale() -> str:
    """Render the locale of the active language for static/js/plotly-locale.js ("" in English)."""
    language = get_language() or "en"
    if language.split("-")[0] == "en":
        return ""
    data = {"name": language, "dictionary": _dictionary(), "format": _format()}
    return format_html(
        '{}<script defer src="{}"></script>',
        json_script(data, "plotly-locale"),
        static("js/plotly-locale.js"),
    )


# plotly.js with only the cartesian trace types (static/vendor/plotly/README.md).
PLOTLY_JS = "vendor/plotly/plotly-cartesian.min.js"


@register.simple_tag
def plotly_js() -> str:
    """Render plotly.js and its locale, deferred: the page paints before the charts are drawn."""
    return format_html('<script defer src="{}"></script>{}', static(PLOTLY_JS), plotly_locale())
