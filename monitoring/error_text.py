"""What a poll error says to whom: admins read the recorded diagnostic, everyone else a summary.

The recorded message (Target.last_error) never holds a response body, but it does tell a
refused port from a reset one or from an HTTP 404: exactly what a port scan needs. Viewers and
planners therefore see one of four classes, which still says what to do about it.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from core.roles import is_admin

POLICY, LIMIT, TOKEN, UNREACHABLE = "policy", "limit", "token", "unreachable"
STORE, SELECTOR_POLICY = "store", "selector_policy"
CLASS_OF_KIND = {
    "store": STORE,  # a read-only target's Prometheus does not answer, or none is set
    "forbidden_selector": SELECTOR_POLICY,
    "forbidden_address": POLICY,
    "invalid_url": POLICY,
    "limit": LIMIT,
    "too_large": LIMIT,
    "token": TOKEN,
}
SUMMARIES = {
    POLICY: _("This address may not be polled: an admin can add it to the monitoring allowlist."),
    LIMIT: _("The target's answer is over the scrape limits (size, samples or labels)."),
    TOKEN: _("The saved bearer token cannot be read any more: enter it again."),
    UNREACHABLE: _("No metrics could be read from this address (an admin sees the details)."),
    STORE: _(
        "The time-series server this read-only target is read from does not answer, or none "
        "is configured."
    ),
    SELECTOR_POLICY: _(
        "This selector's Prometheus job is not allowed any more: an admin can allow it in the "
        "monitoring allowlist."
    ),
}
CLASS_LABELS = {
    POLICY: _("address not allowed"),
    LIMIT: _("over the scrape limits"),
    TOKEN: _("token unreadable"),
    UNREACHABLE: _("no metrics"),
    STORE: _("store unavailable"),
    SELECTOR_POLICY: _("job not allowed"),
}


def error_class(kind: str) -> str:
    """Return the class a non-admin sees for a precise error kind."""
    return CLASS_OF_KIND.get(kind or "", UNREACHABLE)


def public_error(kind: str) -> str:
    """Return the summary a non-admin sees for an error of `kind` (empty for no error)."""
    return str(SUMMARIES[error_class(kind)]) if kind else ""


def error_for(user: Any, kind: str, message: str) -> tuple[str, str]:
    """Return (kind, message) as `user` may read them: precise for admins, classes otherwise."""
    if not kind and not message:
        return "", ""
    if is_admin(user):
        return kind, message
    return error_class(kind), public_error(kind)
