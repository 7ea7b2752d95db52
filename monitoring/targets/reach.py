"""Where pollers and webhooks may connect: the product's allowlist, built from the database.

By default only the inventory's machines (their host names and management addresses) are
reachable. An admin widens that with AllowlistEntry rows (audited); operators can add entries
with MONITORING_URL_ALLOWLIST; local and test settings add loopback for the simulator
(MONITORING_ALLOW_LOOPBACK). Cloud metadata addresses stay refused whatever is listed
(monitoring.scrape.addresses).
"""

from __future__ import annotations

import functools
import ipaddress

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from inventory.validators import validate_hostname
from monitoring.scrape.addresses import forbidden_range
from monitoring.scrape.fetch import Allowlist

LOOPBACK = ("127.0.0.0/8", "::1/128", "localhost")


def inventory_hosts() -> list[str]:
    """Return every machine's host name and management address (a name or an address)."""
    return list(_hosts_of(_inventory_rows()))


def _inventory_rows() -> tuple[tuple[str, str], ...]:
    machine = apps.get_model("inventory", "Machine")
    return tuple(machine.objects.values_list("hostname", "management_address").order_by("pk"))


@functools.lru_cache(maxsize=4)
def _hosts_of(rows: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    hosts: list[str] = []
    for hostname, address in rows:
        for host in (hostname, address):
            # Planners edit the inventory: a "machine" at a loopback address must not open the
            # poller's own host to them (loopback is an admin's or the settings' to allow).
            if host and not _is_loopback(host):
                hosts.append(host)
    return tuple(hosts)


def _is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowlist() -> Allowlist:
    """Return what a poll or a webhook may reach right now (read on every poll: edits apply at
    the next one).

    Only the reading is per poll: the parsed list is kept for the same rows, since parsing 200
    machines' names and addresses was a sixth of a GPU poll's time (bench/bench_gpu.py).
    """
    entry = apps.get_model("monitoring", "AllowlistEntry")
    entries = (
        *_hosts_of(_inventory_rows()),
        *entry.objects.values_list("name", flat=True).order_by("pk"),
        *settings.MONITORING_URL_ALLOWLIST,
        *(LOOPBACK if settings.MONITORING_ALLOW_LOOPBACK else ()),
    )
    return _parsed(entries)


@functools.lru_cache(maxsize=4)
def _parsed(entries: tuple[str, ...]) -> Allowlist:
    return Allowlist.parse(entries)


def validate_entry(value: str) -> str:
    """Return the entry normalised (lower case, CIDR in its network form), or raise naming it.

    An address or network (`10.0.0.5`, `10.0.0.0/24`, `fd12::/64`), a host name (`gpu1.lab`) or
    a domain suffix (`.gpu.internal`). A network that lies in a link-local, metadata or reserved
    range is refused as a mistake, and so is `0.0.0.0/0`-style everything. A wider network that
    merely contains such an address (`100.64.0.0/10`, Tailscale's, holds Alibaba's metadata
    address) is accepted: those addresses stay unreachable at connect time whatever is listed.
    """
    text = (value or "").strip().lower()
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        network = None
    if network is not None:
        if network.prefixlen < (8 if network.version == 4 else 16):
            raise ValidationError(
                _("%(value)s is too wide: list networks of /8 (IPv4) or /16 (IPv6) at most."),
                code="too_wide",
                params={"value": text},
            )
        if forbidden_range(network.network_address) is not None:
            raise ValidationError(
                _("%(value)s is a link-local, metadata or reserved range: it is never reachable."),
                code="forbidden",
                params={"value": text},
            )
        return str(network)
    validate_hostname(text[1:] if text.startswith(".") else text)
    return text
