"""A target's state (up, down, stale, never polled, disabled) and the words a page shows for it.

Below the selectors, the template tags and the machine cards, which all read it.
"""

from datetime import datetime, timedelta

from django.utils.translation import gettext_lazy as _

from monitoring.models import PollStatus, Target

# A target is stale when its last success is older than this many poll intervals.
STALE_INTERVALS = 3

# target_state(...) -> (label, badge class)
STATE_LABELS = {
    "up": (_("up"), "ok"),
    "down": (_("down"), "bad"),
    "stale": (_("stale"), "warn"),
    "never": (_("not polled yet"), ""),
    "disabled": (_("disabled"), ""),
}


def target_state(target: Target, now: datetime) -> str:
    """Return up, down, stale, never or disabled."""
    if not target.enabled:
        return "disabled"
    if target.last_status == PollStatus.NEVER or target.last_poll_at is None:
        return "never"
    if target.last_status == PollStatus.ERROR:
        return "down"
    limit = timedelta(seconds=STALE_INTERVALS * target.poll_interval_s)
    if target.last_success_at is None or now - target.last_success_at > limit:
        return "stale"
    return "up"
