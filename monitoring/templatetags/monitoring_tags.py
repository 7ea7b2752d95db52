"""Template helpers of the monitoring pages: numbers, state badges, charts."""

from __future__ import annotations

import math
from typing import Any

from django import template
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _

from core.roles import is_admin
from monitoring.error_text import CLASS_LABELS, error_for
from monitoring.machines import cards
from monitoring.targets.state import STATE_LABELS, target_state

register = template.Library()

# The stable kinds of monitoring.scrape.errors, as a reader sees them. The error message beside
# a kind is the raw diagnostic (often the operating system's) and is shown as it was recorded.
ERROR_KIND_LABELS = {
    "error": _("error"),
    "fetch": _("fetch failed"),
    "connect": _("connection failed"),
    "tls": _("TLS error"),
    "timeout": _("timed out"),
    "http_status": _("HTTP error status"),
    "too_large": _("response too large"),
    "redirect": _("redirect refused"),
    "forbidden_address": _("address not allowed"),
    "dns": _("name not resolved"),
    "invalid_url": _("invalid URL"),
    "parse": _("unreadable metrics"),
    "source": _("unexpected answer"),
    "limit": _("over the scrape limits"),
}


@register.filter
def error_kind(kind: Any) -> str:
    """Return a poll error kind ("connect", "timeout", ...) in the reader's language."""
    return str(ERROR_KIND_LABELS.get(str(kind), kind))


@register.filter
def error_kind_for(target: Any, user: Any) -> str:
    """Return the target's last error kind as `user` may read it, in the reader's language."""
    kind, _message = error_for(user, target.last_error_kind, target.last_error)
    return str(ERROR_KIND_LABELS.get(kind) or CLASS_LABELS.get(kind, kind))


@register.filter
def error_message_for(target: Any, user: Any) -> str:
    """Return the target's last error message as `user` may read it (see monitoring.error_text)."""
    return error_for(user, target.last_error_kind, target.last_error)[1]


@register.filter
def num(value: Any, digits: int = 1) -> str:
    """Format a number with `digits` decimals, or an en dash when there is no value."""
    if value is None or value == "":
        return "–"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return "–"
    return number_format(round(number, int(digits)), decimal_pos=int(digits), use_l10n=True)


@register.simple_tag
def state_badge(state: str) -> str:
    label, css = STATE_LABELS.get(state, (state, ""))
    return format_html(
        '<span class="badge {} state-badge" data-state="{}">{}</span>', css, state, label
    )


@register.inclusion_tag("monitoring/partials/chart.html")
def chart(spec: Any) -> dict[str, Any]:
    return spec.attrs()


@register.filter
def poll_state(target: Any) -> str:
    """Return up, down, stale (polls stopped coming: starved or no worker), never or disabled."""
    return target_state(target, timezone.now())


@register.filter
def admin_user(user: Any) -> bool:
    return is_admin(user)


@register.filter
def get_item(mapping: Any, key: str) -> Any:
    """Return mapping[key] (series keys contain dots, which templates cannot look up)."""
    if not mapping:
        return None
    return mapping.get(key)


@register.filter
def gib(value: Any) -> float | None:
    """Convert bytes to GiB; nothing for a missing value (a node without memory series: the
    template hands a missing key over as "")."""
    if value is None or value == "":
        return None
    return float(value) / 1024**3


FACTOR_LABELS = {
    "kv_overhead_gib": _("KV overhead per GPU (memory kept out of the KV cache)"),
    "decode_efficiency": _("Decode efficiency (× the engine's HBM and decode MFU)"),
    "prefill_efficiency": _("Prefill efficiency (× the engine's prefill MFU)"),
    "per_request_overhead_ms": _("Per-request overhead per decode step"),
}
RESIDUAL_LABELS = {
    "itl_ms": _("Inter-token latency p50 (ms)"),
    "ttft_ms": _("TTFT p50 (ms)"),
    "kv_blocks": _("KV blocks per GPU"),
}


# The units of plan-comparison rows: stable ids in the API, words on the page.
UNIT_LABELS = {
    "blocks": _("blocks"),
    "tokens": _("tokens"),
    "requests": _("requests"),
    "replicas": _("replicas"),
    "tok/s": _("tok/s"),
    "ms": _("ms"),
}


@register.filter
def unit_label(unit: str) -> str:
    """Return a comparison row's unit in the reader's language."""
    return str(UNIT_LABELS.get(unit, unit))


@register.filter
def factor_label(name: str) -> str:
    return str(FACTOR_LABELS.get(name, name))


@register.filter
def residual_label(quantity: str) -> str:
    return str(RESIDUAL_LABELS.get(quantity, quantity))


@register.filter
def residual_error(residual: Any, which: str) -> float | None:
    """Return a stored residual's prediction error before or after calibration, in %."""
    measured = residual.get("measured")
    predicted = residual.get(which)
    if not measured or predicted is None:
        return None
    return 100.0 * (predicted - measured) / measured


@register.filter
def mib_gib(value: Any) -> float | None:
    """Convert MiB to GiB (None for a missing value)."""
    try:
        return float(value) / 1024
    except (TypeError, ValueError):
        return None


@register.simple_tag
def gpu_grid(cells: Any) -> str:
    """Render GPU cells (GpuCell objects or their dicts) as the grid of the Machines view.

    Built in Python, not by including a template per GPU: 200 machines x 8 GPUs would cost
    over a second of template rendering per refresh. Every text from an exporter is escaped.
    """
    return mark_safe(cards.words().grid(cells))  # noqa: S308 (escaped inside)


@register.simple_tag
def machine_card(row: Any) -> str:
    """Render one machine of the Machines view (a monitoring.machines.overview.MachineRow)."""
    return mark_safe(cards.words().card(row))  # noqa: S308 (escaped inside)


@register.filter
def alert_value(value: Any, rule: Any) -> str:
    """Return an alert's value as a reader understands it: an XID code with its meaning
    ("XID 79: the GPU has fallen off the bus…", not "79.000"), any other value as a number."""
    from monitoring.xid import XID_SERIES, xid_text

    if getattr(rule, "series", "") == XID_SERIES and value not in (None, ""):
        return xid_text(float(value)) or num(value, 0)
    return num(value, 3)
