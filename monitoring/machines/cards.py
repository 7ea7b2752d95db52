"""HTML of the Machines view: one card per machine, one cell per GPU, built in Python.

200 machines x 8 GPUs through Django's template engine (a template per card, i18n tags, URL
reversals) cost most of a refresh; here each card is a few string joins. The words of one
language are translated once (`Words`), every text from an exporter or the inventory is escaped.
"""

from __future__ import annotations

import math
from functools import lru_cache
from html import escape  # the standard library's: Django's adds a lazy-text wrapper per call
from typing import Any

from django.urls import reverse
from django.utils.formats import get_format
from django.utils.text import Truncator
from django.utils.translation import get_language, gettext, ngettext
from django.utils.translation import gettext_lazy as _

from monitoring.error_text import public_error
from monitoring.targets.state import STATE_LABELS
from monitoring.xid import xid_text

GPU_STATE_LABELS = {
    "busy": _("busy"),
    "idle": _("idle, memory in use"),
    "free": _("free"),
    "stuck": _("memory full, idle"),
    "unknown": _("no utilisation reading"),
}
CELL_TITLES = {
    "xid": _("last XID error"),
    "throttled": _("throttled"),
    "plan": _("from the linked plan"),
    "exporter": _("from the exporter labels"),
}
# Any pk stands in for the real one: the URL pattern is reversed once, not once per card.
_PK = 999_999_999


def util_class(value: Any) -> str:
    """Return the CSS class of a utilisation (`util-0` .. `util-10`, 10 % steps; `util-na`)."""
    if value is None or value == "":
        return "util-na"
    try:
        pct = max(0.0, min(100.0, float(value)))
    except (TypeError, ValueError):
        return "util-na"
    return f"util-{round(pct / 10)}"


class Words:
    """What every card of one language shares: translated words, separator, URL patterns."""

    def __init__(self) -> None:
        self.titles = {k: escape(str(v)) for k, v in CELL_TITLES.items()}
        self.states = {k: escape(str(v)) for k, v in GPU_STATE_LABELS.items()}
        self.badges = {k: (escape(str(label)), css) for k, (label, css) in STATE_LABELS.items()}
        self.sep = str(get_format("DECIMAL_SEPARATOR"))
        self.not_in_inventory = escape(gettext("not in the inventory"))
        self.history = escape(gettext("history"))
        self.runs = escape(gettext("Runs:"))
        self.no_target_with_url = escape(
            gettext(
                "Has a GPU metrics URL but no GPU target yet: register GPU targets from the "
                "inventory."
            )
        )
        self.no_exporter = escape(
            gettext(
                "No GPU exporter: set the machine's GPU metrics URL (dcgm-exporter or "
                "nvidia_gpu_exporter) to watch its GPUs."
            )
        )
        self.no_reading = escape(gettext("No GPU reading yet."))
        self.machine_url = reverse("inventory:machine-detail", args=[_PK])
        self.target_url = reverse("monitoring:target-detail", kwargs={"pk": _PK})

    def number(self, value: Any, digits: int) -> str:
        if value is None or not math.isfinite(value):
            return "–"
        return f"{value:.{digits}f}".replace(".", self.sep)

    def cell(self, cell: Any) -> str:
        """One GPU: a machines.overview.GpuCell, or its as_dict() (the GPU target's page)."""
        if isinstance(cell, dict):
            get, gid, state = cell.get, cell["id"], cell["state"]
            user, source, throttled = cell.get("user"), cell.get("user_source"), cell["throttled"]
        else:
            get, gid, state = cell.values.get, cell.id, cell.state
            user, source, throttled = cell.user, cell.user_source, cell.throttled
        util = get("utilization_pct")
        state, gid = escape(str(state)), escape(str(gid))
        badges = ""
        xid = get("xid_last")
        if xid:
            # The title says what the code means (the badge keeps the short code).
            badges += (
                f' <span class="badge bad" title="{escape(xid_text(xid))}">'
                f"XID {self.number(xid, 0)}</span>"
            )
        if throttled:
            badges += f' <span class="badge warn">{self.titles["throttled"]}</span>'
        owner = ""
        if user:
            title = self.titles["plan" if source == "plan" else "exporter"]
            shown = escape(user if len(user) <= 28 else user[:27] + "…")
            owner = (
                f'<div class="small gpu-user" title="{title}">'
                f'<span translate="no">{shown}</span></div>'
            )
        used, total = get("memory_used_mib"), get("memory_total_mib")
        return (
            f'<div class="gpu-cell gpu-{state} {util_class(util)}" data-gpu="{gid}" '
            f'data-gpu-state="{state}" data-util="{"" if util is None else f"{util:g}"}">'
            f'<div class="gpu-cell-head"><strong>GPU {gid}</strong>{badges}</div>'
            f'<div class="gpu-util">{"–" if util is None else self.number(util, 0) + " %"}</div>'
            f'<div class="small">{self.number(None if used is None else used / 1024, 1)} / '
            f"{self.number(None if total is None else total / 1024, 0)} GiB · "
            f"{self.number(get('temperature_c'), 0)} °C</div>"
            f'<div class="small gpu-state">{self.states.get(state, state)}</div>'
            f"{owner}</div>"
        )

    def grid(self, cells: Any) -> str:
        return '<div class="gpu-grid">' + "".join(self.cell(c) for c in cells) + "</div>"

    def state_badge(self, state: str) -> str:
        label, css = self.badges.get(state, (escape(state), ""))
        return f'<span class="badge {css} state-badge" data-state="{escape(state)}">{label}</span>'

    def _url(self, pattern: str, pk: int) -> str:
        return escape(pattern.replace(str(_PK), str(int(pk))))

    def card(self, row: Any) -> str:
        """One machine's card (a monitoring.machines.overview.MachineRow)."""
        machine, target, state = row.machine, row.target, escape(row.state)
        head: list[str] = []
        if machine is not None:
            url = self._url(self.machine_url, machine.pk)
            head.append(
                f'<h2 class="machine-name"><a href="{url}">{escape(machine.hostname)}</a></h2>'
            )
        else:
            name = escape(row.hostname or (target.name if target else ""))
            head.append(
                f'<h2 class="machine-name">{name} '
                f'<span class="badge warn">{self.not_in_inventory}</span></h2>'
            )
        if target is not None:
            head.append(self.state_badge(row.state))
        if machine is not None:
            count = machine.gpu_count
            in_inventory = ngettext(
                "%(n)s GPU in the inventory", "%(n)s GPUs in the inventory", count
            ) % {"n": count}
            head.append(
                f'<span class="muted small">{escape(machine.gpu_type.name)} · '
                f"{escape(in_inventory)}</span>"
            )
        if row.gpus:
            free = row.free
            total = row.inventory_gpus or row.reported_gpus
            words = gettext("%(free)s of %(total)s free now") % {"free": free, "total": total}
            head.append(f'<span class="small" data-free="{free}">{escape(words)}</span>')
        if row.missing:
            missing = ngettext("%(n)s GPU not reported", "%(n)s GPUs not reported", row.missing) % {
                "n": row.missing
            }
            head.append(f'<span class="badge bad">{escape(missing)}</span>')
        if target is not None:
            url = self._url(self.target_url, target.pk)
            head.append(f'<a class="small" href="{url}">{self.history}</a>')
        parts = [
            f'<section class="card machine-card state-{state}" '
            f'data-machine="{escape(row.hostname)}" data-state="{state}">',
            '<div class="toolbar machine-head">',
            *head,
            "</div>",
        ]
        if row.servers:
            runs = ", ".join(
                f'<a href="{self._url(self.target_url, s.pk)}">{escape(s.name)}</a> '
                f"({escape(str(s.get_kind_display()))})"
                for s in row.servers
            )
            parts.append(f'<p class="small muted">{self.runs} {runs}</p>')
        parts.append(self._body(row))
        parts.append("</section>")
        return "".join(parts)

    def _body(self, row: Any) -> str:
        if row.gpus:
            return self.grid(row.gpus)
        if row.target is None:
            has_url = row.machine is not None and row.machine.gpu_metrics_url
            text = self.no_target_with_url if has_url else self.no_exporter
            return f'<p class="muted small">{text}</p>'
        if row.state == "down":
            # The summary every role may read (admins find the diagnostic on the target's page).
            summary = public_error(row.target.last_error_kind or "error")
            shown = escape(Truncator(summary).chars(160))
            return f'<p class="tile-error small">{shown}</p>'
        return f'<p class="muted small">{self.no_reading}</p>'


@lru_cache(maxsize=16)
def _words(language: str | None, separator: str) -> Words:
    return Words()


def words() -> Words:
    """The Words of the active language (built once per language and separator)."""
    return _words(get_language(), str(get_format("DECIMAL_SEPARATOR")))
