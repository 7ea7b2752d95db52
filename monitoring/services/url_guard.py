"""The URL guard every target and webhook URL passes before it is saved."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from monitoring import conf
from monitoring.scrape.errors import ScrapeError
from monitoring.scrape.fetch import check_url, guard


def validate_monitored_url(url: str, *, field_name: str = "base_url") -> None:
    """Refuse URLs the poller would refuse: scheme, credentials, forbidden or unlisted addresses.

    Checked after DNS resolution, here and again on every poll (an answer can change).
    """
    try:
        guard(check_url(url), conf.fetch_policy())
    except ScrapeError as exc:
        raise ValidationError({field_name: str(exc)}, code=exc.kind) from None
