"""Every spelling of a cloud metadata address is refused, literal or resolved (issue 15, item 2)."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitoring.scrape.addresses import embedded_ipv4, forbidden_range
from monitoring.scrape.errors import FetchError
from monitoring.scrape.fetch import Allowlist, FetchPolicy, guard
from monitoring.scrape.fetch import check_url as parse_url

METADATA_FORMS = [
    "169.254.169.254",  # AWS, GCP, Azure, Oracle, OpenStack
    "169.254.170.2",  # ECS task metadata
    "100.100.100.200",  # Alibaba Cloud
    "168.63.129.16",  # Azure WireServer
    "fd00:ec2::254",  # AWS over IPv6
    "::ffff:169.254.169.254",  # IPv4-mapped
    "::ffff:a9fe:a9fe",  # IPv4-mapped, hex
    "::a9fe:a9fe",  # IPv4-compatible
    "::169.254.169.254",  # IPv4-compatible, dotted
    "::ffff:0:a9fe:a9fe",  # IPv4-translated (SIIT)
    "64:ff9b::a9fe:a9fe",  # NAT64 well-known prefix
    "64:ff9b::100.100.100.200",  # NAT64 to Alibaba's
    "64:ff9b:1::a9fe:a9fe",  # local-use NAT64
    "2002:a9fe:a9fe::",  # 6to4
    "2002:a9fe:a9fe:1::1",  # 6to4, any host behind it
    "2001:0:4136:e378:8000:63bf:5601:5601",  # Teredo whose client is 169.254.169.254 (inverted)
    "0.0.0.0",
    "0.1.2.3",
    "fe80::1",
]


@pytest.mark.parametrize("text", METADATA_FORMS)
def test_every_metadata_form_is_forbidden(text):
    assert forbidden_range(ipaddress.ip_address(text)) is not None


@pytest.mark.parametrize("text", METADATA_FORMS)
def test_a_name_resolving_to_any_form_is_refused_even_when_allowed_anywhere(text):
    policy = FetchPolicy(allowlist=Allowlist.anywhere(), resolver=lambda host, port: [text])

    with pytest.raises(FetchError) as info:
        guard(parse_url("http://innocent.example:8000/metrics"), policy)

    assert info.value.kind == "forbidden_address"


@pytest.mark.parametrize(
    "host",
    ["2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518"],
    ids=["decimal", "hex", "octal", "short"],
)
def test_numeric_spellings_are_checked_after_the_system_resolver(host):
    # getaddrinfo reads these as 169.254.169.254 without asking DNS; the guard checks its answer.
    try:
        resolved = socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)[0][4][0]
    except OSError:
        pytest.skip("this libc does not read the numeric form")
    assert resolved == "169.254.169.254"
    with pytest.raises(FetchError) as info:
        guard(parse_url(f"http://{host}/latest/"), FetchPolicy(allowlist=Allowlist.anywhere()))

    assert info.value.kind in ("forbidden_address", "invalid_url")


@pytest.mark.parametrize(
    "text", ["10.0.0.5", "192.168.1.9", "2001:db8::5", "127.0.0.1", "::1", "100.64.0.1"]
)
def test_ordinary_addresses_are_not_forbidden(text):
    assert forbidden_range(ipaddress.ip_address(text)) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_any_link_local_ipv4_inside_nat64_or_mapped_is_forbidden(low):
    v4 = ipaddress.IPv4Address(low)
    for prefix in (0x0064FF9B << 96, 0xFFFF << 32):
        v6 = ipaddress.IPv6Address(prefix | low)
        assert v4 in set(embedded_ipv4(v6))
        if v4 in ipaddress.ip_network("169.254.0.0/16"):
            assert forbidden_range(v6) is not None


def test_the_empty_allowlist_allows_nothing_and_a_listed_name_passes():
    resolver = lambda host, port: ["10.0.0.7"]  # noqa: E731
    url = parse_url("http://gpu-07.lab:8000/metrics")

    with pytest.raises(FetchError):
        guard(url, FetchPolicy(allowlist=Allowlist(), resolver=resolver))
    listed = Allowlist.parse(["gpu-07.lab"])
    assert guard(url, FetchPolicy(allowlist=listed, resolver=resolver)) == "10.0.0.7"
    widened = Allowlist().union(Allowlist.parse(["10.0.0.0/24"]))
    assert guard(url, FetchPolicy(allowlist=widened, resolver=resolver)) == "10.0.0.7"


def test_a_listed_name_never_vouches_for_loopback():
    url = parse_url("http://gpu-07.lab:8000/metrics")
    to_loopback = FetchPolicy(
        allowlist=Allowlist.parse(["gpu-07.lab"]), resolver=lambda host, port: ["127.0.0.1"]
    )
    with pytest.raises(FetchError):
        guard(url, to_loopback)

    listed = FetchPolicy(
        allowlist=Allowlist.parse(["127.0.0.0/8"]), resolver=lambda host, port: ["127.0.0.1"]
    )
    assert guard(url, listed) == "127.0.0.1"
