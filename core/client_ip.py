"""The client's address behind trusted reverse proxies (TRUSTED_PROXIES), for lockouts.

X-Forwarded-For is believed only when the connecting peer (REMOTE_ADDR) is a configured
proxy; the list is then read from the right, skipping further trusted proxies, and the first
other address is the client. That is the rule of nginx's real_ip module. django-ipware (the
library django-axes suggests) matches trusted proxies inside the header instead and never
checks the peer, so a client that reaches gunicorn directly could pick its own address.
"""

import ipaddress
from functools import lru_cache
from typing import Any

from django.conf import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry)


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_ip(request: Any) -> str:
    """Return the address of the client that sent `request` (see the module docstring)."""
    peer = request.META.get("REMOTE_ADDR", "") or ""
    networks = _networks(tuple(getattr(settings, "TRUSTED_PROXIES", ()) or ()))
    if not networks or not _trusted(peer, networks):
        return peer
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, networks):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return peer  # garbage in the header: fall back to the proxy itself
    return hops[0] if hops else peer
