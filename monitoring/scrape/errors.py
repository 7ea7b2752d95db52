"""Typed errors of the scrape package; each has a short `kind` stored with the target's error."""

from __future__ import annotations


class ScrapeError(Exception):
    """Base of every error a poll can record; `kind` is a stable short id, str() the message."""

    kind = "error"


class FetchError(ScrapeError):
    kind = "fetch"


class ConnectError(FetchError):
    kind = "connect"


class TlsError(FetchError):
    kind = "tls"


class FetchTimeoutError(FetchError):
    kind = "timeout"


class HttpStatusError(FetchError):
    kind = "http_status"

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class TooLargeError(FetchError):
    kind = "too_large"


class RedirectError(FetchError):
    kind = "redirect"


class ForbiddenAddressError(FetchError):
    kind = "forbidden_address"


class DnsError(FetchError):
    kind = "dns"


class InvalidUrlError(FetchError):
    kind = "invalid_url"


class ParseError(ScrapeError):
    kind = "parse"


class LimitError(ParseError):
    """A page over a scrape limit (samples, labels, label lengths): nothing of it is stored."""

    kind = "limit"


class SourceError(ScrapeError):
    """A saved file that cannot be read, or a response that is not what the endpoint promises."""

    kind = "source"
