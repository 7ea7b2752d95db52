"""Limit password spraying: failed sign-ins per client address, across all user names.

django-axes locks a user name + address pair (AXES_LOCKOUT_PARAMETERS); one address trying
one password on many accounts never trips that. This counts every failure per address in the
shared cache and refuses sign-ins from an address over LOGIN_IP_FAILURE_LIMIT until the
lockout period (LOGIN_LOCKOUT_MINUTES) has passed since its last failure.
"""

from typing import Any

from django.conf import settings
from django.core.cache import cache

from core.client_ip import client_ip


def _key(address: str) -> str:
    return f"login-failures:{address}"


def record_failure(sender: Any, credentials: Any = None, request: Any = None, **kw: Any) -> None:
    """user_login_failed receiver: count the failure against the client's address."""
    if request is None or not getattr(settings, "AXES_ENABLED", True):
        return
    key = _key(client_ip(request))
    timeout_s = int(settings.AXES_COOLOFF_TIME.total_seconds())
    if not cache.add(key, 1, timeout=timeout_s):
        try:
            cache.incr(key)
        except ValueError:  # expired between add() and incr()
            cache.add(key, 1, timeout=timeout_s)
        cache.touch(key, timeout=timeout_s)


def is_blocked(request: Any) -> bool:
    """Return whether the client's address has failed too often to try again now."""
    if not getattr(settings, "AXES_ENABLED", True):
        return False
    failures = cache.get(_key(client_ip(request)), 0)
    return failures >= settings.LOGIN_IP_FAILURE_LIMIT
