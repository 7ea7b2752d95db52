"""What a GPU XID error code means, for alert values and machine cards.

XID codes are the NVIDIA driver's error events (dcgm-exporter reports the last one as
DCGM_FI_DEV_XID_ERRORS). The meanings are NVIDIA's, from its XID catalog
(https://docs.nvidia.com/deploy/xid-errors/), for the codes a serving fleet meets most.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

XID_SERIES = "gpu.xid_last"
XID_CATALOG_URL = "https://docs.nvidia.com/deploy/xid-errors/"

MEANINGS: dict[int, Any] = {
    13: gettext_lazy("graphics engine exception (often an application error)"),
    31: gettext_lazy("GPU memory page fault (often an application error)"),
    43: gettext_lazy("GPU stopped processing: a channel was reset"),
    45: gettext_lazy("preemptive clean-up after earlier errors"),
    48: gettext_lazy("double-bit ECC memory error"),
    61: gettext_lazy("internal micro-controller breakpoint"),
    62: gettext_lazy("internal micro-controller halted"),
    63: gettext_lazy("ECC page retirement or row remapping recorded"),
    64: gettext_lazy("ECC page retirement or row remapping failed"),
    74: gettext_lazy("NVLink error"),
    79: gettext_lazy("the GPU has fallen off the bus: it no longer answers; drain and reset it"),
    92: gettext_lazy("high single-bit ECC error rate"),
    94: gettext_lazy("contained ECC error: the affected application must restart"),
    95: gettext_lazy("uncontained ECC error: reset the GPU"),
    119: gettext_lazy("GSP firmware timed out"),
    120: gettext_lazy("GSP firmware error"),
}


def xid_text(value: float | None) -> str:
    """Return an XID code as a reader understands it: "XID 79: the GPU has fallen off the
    bus…" ("" for no error)."""
    if value is None or value <= 0:
        return ""
    code = int(value)
    meaning = MEANINGS.get(code)
    if meaning is None:
        return _("XID %(code)s: see NVIDIA's XID catalog") % {"code": code}
    return _("XID %(code)s: %(meaning)s") % {"code": code, "meaning": meaning}
