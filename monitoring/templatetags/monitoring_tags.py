"""Template helpers of the monitoring pages: numbers, state badges, charts."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from django import template
from django.utils import timezone
from django.utils.formats import get_format, number_format
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from core.roles import is_admin
from monitoring.error_text import CLASS_LABELS, error_for

register = template.Library()

STATE_LABELS = {
    "up": (_("up"), "ok"),
    "down": (_("down"), "bad"),
    "stale": (_("stale"), "warn"),
    "never": (_("not polled yet"), ""),
    "disabled": (_("disabled"), ""),
}

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
    from monitoring.selectors import target_state

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
    """Convert bytes to GiB."""
    if value is None:
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


GPU_STATE_LABELS = {
    "busy": _("busy"),
    "idle": _("idle, memory in use"),
    "free": _("free"),
    "stuck": _("memory full, idle"),
    "unknown": _("no utilisation reading"),
}


@register.filter
def util_class(value: Any) -> str:
    """Return the CSS class of a utilisation (`util-0` .. `util-10`, 10 % steps; `util-na`)."""
    if value is None or value == "":
        return "util-na"
    try:
        pct = max(0.0, min(100.0, float(value)))
    except (TypeError, ValueError):
        return "util-na"
    return f"util-{round(pct / 10)}"


CELL_TITLES = {
    "xid": _("last XID error"),
    "throttled": _("throttled"),
    "plan": _("from the linked plan"),
    "exporter": _("from the exporter labels"),
}


def _field(cell: Any, name: str) -> Any:
    return cell.get(name) if isinstance(cell, dict) else getattr(cell, name)


class _CellText:
    """What every cell of one grid shares: translated words, the decimal separator."""

    def __init__(self) -> None:
        self.titles = {k: escape(str(v)) for k, v in CELL_TITLES.items()}
        self.states = {k: escape(str(v)) for k, v in GPU_STATE_LABELS.items()}
        self.sep = str(get_format("DECIMAL_SEPARATOR"))

    def number(self, value: Any, digits: int) -> str:
        if value is None or not math.isfinite(value):
            return "–"
        return f"{value:.{digits}f}".replace(".", self.sep)

    def cell(self, cell: Any) -> str:
        util = _field(cell, "utilization_pct")
        state = str(_field(cell, "state"))
        gid = escape(str(_field(cell, "id")))
        badges = ""
        xid = _field(cell, "xid_last")
        if xid:
            badges += (
                f' <span class="badge bad" title="{self.titles["xid"]}">'
                f"XID {self.number(xid, 0)}</span>"
            )
        if _field(cell, "throttled"):
            badges += f' <span class="badge warn">{self.titles["throttled"]}</span>'
        owner = ""
        user = _field(cell, "user")
        if user:
            source = "plan" if _field(cell, "user_source") == "plan" else "exporter"
            shown = escape(user if len(user) <= 28 else user[:27] + "…")
            owner = (
                f'<div class="small gpu-user" title="{self.titles[source]}">'
                f'<span translate="no">{shown}</span></div>'
            )
        used = _field(cell, "memory_used_mib")
        total = _field(cell, "memory_total_mib")
        return (
            f'<div class="gpu-cell gpu-{escape(state)} {util_class(util)}" data-gpu="{gid}" '
            f'data-gpu-state="{escape(state)}" data-util="{"" if util is None else f"{util:g}"}">'
            f'<div class="gpu-cell-head"><strong>GPU {gid}</strong>{badges}</div>'
            f'<div class="gpu-util">{"–" if util is None else self.number(util, 0) + " %"}</div>'
            f'<div class="small">{self.number(None if used is None else used / 1024, 1)} / '
            f"{self.number(None if total is None else total / 1024, 0)} GiB · "
            f"{self.number(_field(cell, 'temperature_c'), 0)} °C</div>"
            f'<div class="small gpu-state">{self.states.get(state, escape(state))}</div>'
            f"{owner}</div>"
        )


@lru_cache(maxsize=16)
def _cell_text(language: str | None, separator: str) -> _CellText:
    """One _CellText per language (its words and separator do not change at run time)."""
    return _CellText()


@register.simple_tag
def gpu_grid(cells: Any) -> str:
    """Render GPU cells (GpuCell objects or their dicts) as the grid of the Machines view.

    Built in Python, not by including a template per GPU: 200 machines x 8 GPUs would cost
    over a second of template rendering per refresh. Every text from an exporter is escaped.
    """
    text = _cell_text(get_language(), str(get_format("DECIMAL_SEPARATOR")))
    return mark_safe('<div class="gpu-grid">' + "".join(text.cell(c) for c in cells) + "</div>")  # noqa: S308
