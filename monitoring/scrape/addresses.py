"""Which IP addresses a poll or a webhook may never reach, in any of their spellings.

Cloud metadata services answer on well-known addresses (169.254.169.254 for AWS, GCP, Azure,
Oracle and OpenStack; fd00:ec2::254 for AWS over IPv6; 100.100.100.200 for Alibaba Cloud;
168.63.129.16 for Azure's WireServer). An IPv6 address can carry an IPv4 one inside it: mapped
(::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48),
6to4 (2002:aabb:ccdd::) and Teredo; each of those spellings is unwrapped and checked as well.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALWAYS_FORBIDDEN: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(cidr)
    for cidr in (
        "169.254.0.0/16",  # link-local IPv4: the usual metadata address lives here
        "100.100.100.200/32",  # Alibaba Cloud metadata
        "168.63.129.16/32",  # Azure WireServer
        "0.0.0.0/8",  # "this network": 0.0.0.0 reaches the local host on Linux
        "224.0.0.0/4",  # multicast
        "255.255.255.255/32",
        "fe80::/10",  # link-local IPv6
        "fd00:ec2::254/128",  # AWS metadata over IPv6
        "::/128",
        "ff00::/8",  # multicast
        "64:ff9b:1::/48",  # local-use NAT64 (RFC 8215): embedding depends on the prefix length
    )
)
# /96 prefixes whose last 32 bits are an IPv4 address: NAT64, IPv4-translated (SIIT) and the
# deprecated IPv4-compatible form.
_LOW32_PREFIXES = tuple(
    ipaddress.ip_network(cidr) for cidr in ("64:ff9b::/96", "::ffff:0:0:0/96", "::/96")
)


def parse_address(text: str) -> IPAddress:
    """Parse an address as a resolver returns it (an IPv6 zone id `%eth0` is dropped)."""
    return ipaddress.ip_address(text.split("%", 1)[0])


def embedded_ipv4(address: IPAddress) -> Iterator[ipaddress.IPv4Address]:
    """Yield every IPv4 address that `address` carries (none for a plain IPv6 or IPv4 one)."""
    if isinstance(address, ipaddress.IPv4Address):
        return
    if address.ipv4_mapped is not None:
        yield address.ipv4_mapped
    if address.sixtofour is not None:
        yield address.sixtofour
    if address.teredo is not None:
        yield from address.teredo  # (server, client)
    if int(address) > 1 and any(address in prefix for prefix in _LOW32_PREFIXES):
        yield ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)  # :: and ::1 carry none


def canonical(address: IPAddress) -> IPAddress:
    """Return the IPv4 address inside an IPv4-mapped IPv6 one, else the address itself."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def forbidden_range(address: IPAddress) -> IPNetwork | None:
    """Return the forbidden range that `address` or an IPv4 address inside it falls in."""
    for candidate in (address, *embedded_ipv4(address)):
        for network in ALWAYS_FORBIDDEN:
            if candidate.version == network.version and candidate in network:
                return network
    return None
