"""Fetch a URL with limits: guarded address, timeouts, size cap, same-host redirects only.

The address guard resolves the host itself, checks every resolved address, then connects to the
checked address (Host header and TLS server name keep the original host), so a DNS answer cannot
change between the check and the connection. A bearer token is sent only to the original host and
never appears in an error message.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import httpx

from .addresses import (
    IPAddress,
    IPNetwork,
    canonical,
    forbidden_range,
    parse_address,
)
from .errors import (
    ConnectError,
    DnsError,
    FetchError,
    FetchTimeoutError,
    ForbiddenAddressError,
    HttpStatusError,
    InvalidUrlError,
    RedirectError,
    TlsError,
    TooLargeError,
)
from .limits import DEFAULT_LIMITS, ScrapeLimits

Resolver = Callable[[str, int], Sequence[str]]

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/plain;version=0.0.4;q=0.9,application/json;q=0.8,*/*;q=0.1"


def system_resolver(host: str, port: int) -> list[str]:
    """Return every address `host` resolves to (raises socket.gaierror)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True, slots=True, kw_only=True)
class Allowlist:
    """Where a fetch may go: a host passes when its name is listed or all its addresses are
    inside a listed network (loopback only through a listed network, never through a name).
    Empty allows nothing; `Allowlist.anywhere()` allows every address that is not always
    forbidden (the command line's choice, never the product's default)."""

    networks: tuple[IPNetwork, ...] = ()
    hostnames: frozenset[str] = frozenset()
    anywhere_allowed: bool = False

    @classmethod
    def anywhere(cls) -> Allowlist:
        return cls(anywhere_allowed=True)

    @classmethod
    def parse(cls, entries: Sequence[str]) -> Allowlist:
        """Build from strings: CIDRs or addresses (`10.0.0.0/8`, `::1`), hostnames otherwise."""
        networks: list[IPNetwork] = []
        names: set[str] = set()
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                names.add(entry.lower().rstrip("."))
        return cls(networks=tuple(networks), hostnames=frozenset(names))

    def union(self, other: Allowlist) -> Allowlist:
        return Allowlist(
            networks=tuple(dict.fromkeys((*self.networks, *other.networks))),
            hostnames=self.hostnames | other.hostnames,
            anywhere_allowed=self.anywhere_allowed or other.anywhere_allowed,
        )

    def allows_name(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        for name in self.hostnames:
            if host == name or (name.startswith(".") and host.endswith(name)):
                return True
        return False

    def allows_address(self, address: IPAddress) -> bool:
        return self.anywhere_allowed or any(
            address.version == network.version and address in network for network in self.networks
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchPolicy:
    """Limits of one fetch. Timeouts in seconds; `max_bytes` caps the decoded body."""

    connect_timeout_s: float = 3.0
    total_timeout_s: float = 10.0
    max_bytes: int = DEFAULT_MAX_BYTES
    max_redirects: int = 3
    # The library's default reaches anything not always forbidden; the product passes its own
    # (monitoring.conf.fetch_policy: the inventory's hosts plus the admin's allowlist).
    allowlist: Allowlist = field(default_factory=Allowlist.anywhere)
    resolver: Resolver = system_resolver
    # True (system CAs), False (no verification), or the path of a CA bundle (internal CA).
    verify_tls: bool | str = True
    # What a page may hold (applied by parse); see scrape.limits.
    limits: ScrapeLimits = DEFAULT_LIMITS
    # time.monotonic() by which the whole poll must be done: every fetch of a poll (Ray's
    # discovery, exporters, dashboard) shares one budget instead of a timeout each.
    deadline: float | None = None

    def within_budget(self) -> FetchPolicy:
        """Return this policy with a poll-wide deadline `total_timeout_s` from now (kept if set)."""
        if self.deadline is not None:
            return self
        return replace(self, deadline=time.monotonic() + self.total_timeout_s)


@dataclass(frozen=True, slots=True)
class FetchResult:
    url: str
    status_code: int
    content_type: str
    body: bytes
    elapsed_s: float

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def check_url(url: str) -> httpx.URL:
    """Return the parsed URL, or raise InvalidUrlError (scheme, host, credentials)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise InvalidUrlError(f"invalid URL: {exc}") from None
    if parsed.scheme not in ("http", "https"):
        raise InvalidUrlError(f"only http and https URLs are allowed, not {parsed.scheme!r}")
    if not parsed.host:
        raise InvalidUrlError("the URL has no host")
    if parsed.userinfo:
        raise InvalidUrlError("credentials in the URL are not allowed: use the bearer token field")
    return parsed


def is_metrics_endpoint(url: httpx.URL) -> bool:
    """Whether `url` names a /metrics endpoint itself rather than a server's base URL."""
    return url.path.rstrip("/").endswith("/metrics")


def guard(url: httpx.URL, policy: FetchPolicy) -> str:
    """Resolve the URL's host and return the address to connect to, or raise.

    Every resolved address must be allowed: a name that resolves to one good and one forbidden
    address is refused.
    """
    host = url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = list(policy.resolver(host, port))
        except (OSError, UnicodeError) as exc:
            raise DnsError(f"cannot resolve host {host!r}: {exc}") from None
        if not addresses:
            raise DnsError(f"host {host!r} resolves to no address")
    name_allowed = literal is None and policy.allowlist.allows_name(host)
    for text in addresses:
        address = canonical(parse_address(text))
        forbidden = forbidden_range(address)
        if forbidden is not None:
            raise ForbiddenAddressError(
                f"host {host!r} resolves to {address}, in the forbidden range {forbidden}"
            )
        if name_allowed and not address.is_loopback:
            continue  # a listed name vouches for its addresses, but never for loopback
        if not policy.allowlist.allows_address(address):
            raise ForbiddenAddressError(
                f"host {host!r} resolves to {address}, which the allowlist does not allow"
            )
    return addresses[0].split("%", 1)[0]


def fetch(
    url: str,
    *,
    policy: FetchPolicy | None = None,
    token: str | None = None,
    client: httpx.Client | None = None,
) -> FetchResult:
    """GET `url` within the policy's limits; raise a FetchError subclass on any failure."""
    policy = policy or FetchPolicy()
    started = time.monotonic()
    deadline = started + policy.total_timeout_s
    if policy.deadline is not None:
        deadline = min(deadline, policy.deadline)
    current = check_url(url)
    origin = (current.scheme, current.host, current.port)
    own_client = client is None
    http = client or httpx.Client(
        verify=_verify(policy.verify_tls), follow_redirects=False, trust_env=False
    )
    try:
        for _hop in range(policy.max_redirects + 1):
            address = guard(current, policy)
            response_or_location = _get_once(current, address, token, policy, deadline, http)
            if isinstance(response_or_location, FetchResult):
                return FetchResult(
                    url=str(current),
                    status_code=response_or_location.status_code,
                    content_type=response_or_location.content_type,
                    body=response_or_location.body,
                    elapsed_s=time.monotonic() - started,
                )
            target = current.join(response_or_location)
            if (target.scheme, target.host, target.port) != origin:
                raise RedirectError(
                    f"redirect to another host or scheme refused: {_safe(target)[:200]}"
                )
            current = check_url(str(target))
        raise RedirectError(f"more than {policy.max_redirects} redirects")
    finally:
        if own_client:
            http.close()


def _verify(setting: bool | str) -> bool | ssl.SSLContext:
    if isinstance(setting, str):
        return ssl.create_default_context(cafile=setting)
    return setting


def _safe(url: httpx.URL) -> str:
    """Return the URL without query or credentials, for messages."""
    return str(url.copy_with(query=None, fragment=None, username=None, password=None))


def _get_once(
    url: httpx.URL,
    address: str,
    token: str | None,
    policy: FetchPolicy,
    deadline: float,
    http: httpx.Client,
) -> FetchResult | str:
    """Return the result, or the Location of a redirect."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchTimeoutError(f"the poll's time budget of {policy.total_timeout_s:g} s is spent")
    headers = {"Host": url.netloc.decode("ascii"), "Accept": _ACCEPT}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    pinned = url.copy_with(host=address)
    timeout = httpx.Timeout(
        connect=min(policy.connect_timeout_s, remaining),
        read=remaining,
        write=remaining,
        pool=remaining,
    )
    extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
    request = http.build_request(
        "GET", pinned, headers=headers, timeout=timeout, extensions=extensions
    )
    try:
        response = http.send(request, stream=True)
    except httpx.ConnectTimeout:
        raise FetchTimeoutError(
            f"connect timeout of {policy.connect_timeout_s:g} s to {url.host}:{url.port or ''}"
        ) from None
    except httpx.TimeoutException:
        raise FetchTimeoutError(f"total timeout of {policy.total_timeout_s:g} s exceeded") from None
    except httpx.ConnectError as exc:
        if _is_tls(exc):
            raise TlsError(f"TLS handshake with {url.host} failed: {_reason(exc)}") from None
        raise ConnectError(f"cannot connect to {url.host}: {_reason(exc)}") from None
    except httpx.HTTPError as exc:
        raise FetchError(f"HTTP error from {url.host}: {_reason(exc)}") from None
    try:
        if response.status_code in _REDIRECT_CODES:
            location = response.headers.get("location")
            if not location:
                raise RedirectError(f"HTTP {response.status_code} without a Location header")
            return str(location)
        if response.status_code >= 400:
            # No reason phrase: it is the server's text, like its body.
            raise HttpStatusError(
                f"HTTP {response.status_code} from {_safe(url)}",
                response.status_code,
            )
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > policy.max_bytes:
            raise TooLargeError(
                f"response of {int(declared)} bytes exceeds the cap of {policy.max_bytes} bytes"
            )
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > policy.max_bytes:
                    raise TooLargeError(f"response exceeds the cap of {policy.max_bytes} bytes")
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise FetchTimeoutError(
                        f"total timeout of {policy.total_timeout_s:g} s exceeded while reading"
                    )
        except httpx.TimeoutException:
            raise FetchTimeoutError(
                f"total timeout of {policy.total_timeout_s:g} s exceeded while reading"
            ) from None
        except httpx.HTTPError as exc:
            raise FetchError(
                f"error reading the response from {url.host}: {_reason(exc)}"
            ) from None
        return FetchResult(
            url=str(url),
            status_code=response.status_code,
            content_type=response.headers.get("content-type", ""),
            body=b"".join(chunks),
            elapsed_s=0.0,
        )
    finally:
        response.close()


def _is_tls(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text[:200]
