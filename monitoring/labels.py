"""The words a page shows for a target's state, with the badge's CSS class.

Below the template tags and the machine cards, which both draw the badge.
"""

from django.utils.translation import gettext_lazy as _

# target_state(...) -> (label, badge class)
STATE_LABELS = {
    "up": (_("up"), "ok"),
    "down": (_("down"), "bad"),
    "stale": (_("stale"), "warn"),
    "never": (_("not polled yet"), ""),
    "disabled": (_("disabled"), ""),
}
