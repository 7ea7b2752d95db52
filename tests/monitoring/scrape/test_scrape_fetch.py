"""Fetch against a real loopback server: every failure of METRICS.md, typed and with a message."""

from __future__ import annotations

import socket
import time

import pytest

from monitoring.scrape.errors import FetchError
from monitoring.scrape.fetch import Allowlist, FetchPolicy, fetch, guard
from monitoring.scrape.fetch import check_url as parse_url

from .conftest import reply

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

TOKEN = "s3cret-token-value"
FAST = FetchPolicy(connect_timeout_s=0.5, total_timeout_s=1.5)


def fail(url: str, policy: FetchPolicy = FAST, token: str | None = TOKEN) -> FetchError:
    with pytest.raises(FetchError) as info:
        fetch(url, policy=policy, token=token)
    assert TOKEN not in str(info.value)
    return info.value


def chunked(chunks, delay_s: float = 0.0, stop=None):
    def behave(h):
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for chunk in chunks():
            if stop is not None and stop.is_set():
                return
            h.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            h.wfile.flush()
            if delay_s:
                time.sleep(delay_s)
        h.wfile.write(b"0\r\n\r\n")

    return behave


def test_ok_returns_the_body_and_sends_the_bearer_token(fake_server):
    fake_server.routes["/metrics"] = reply(200, b"up 1\n", {"Content-Type": "text/plain"})

    result = fetch(f"{fake_server.base}/metrics", policy=FAST, token=TOKEN)

    assert result.body == b"up 1\n"
    assert result.status_code == 200
    assert fake_server.seen[0]["Authorization"] == f"Bearer {TOKEN}"


def test_connection_refused():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: refused

    error = fail(f"http://127.0.0.1:{port}/metrics")

    assert error.kind == "connect"
    assert "127.0.0.1" in str(error)


def test_dns_failure_is_typed():
    def no_such_host(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    error = fail("http://vllm.invalid/metrics", FetchPolicy(resolver=no_such_host))

    assert error.kind == "dns"
    assert "vllm.invalid" in str(error)


def test_connect_timeout_when_the_accept_queue_is_full():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):  # fill the backlog: further SYNs are dropped, connect() hangs
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            fillers.append(c)
        time.sleep(0.1)
        started = time.monotonic()
        error = fail(f"http://127.0.0.1:{port}/metrics", FetchPolicy(connect_timeout_s=0.3))
        assert error.kind == "timeout"
        assert time.monotonic() - started < 3
    finally:
        for c in fillers:
            c.close()
        listener.close()


def test_total_timeout_when_the_server_never_answers(fake_server):
    fake_server.routes["/metrics"] = lambda h: fake_server.stop.wait(5)

    started = time.monotonic()
    error = fail(f"{fake_server.base}/metrics", FetchPolicy(total_timeout_s=0.5))

    assert error.kind == "timeout"
    assert time.monotonic() - started < 2


def test_total_timeout_on_a_body_that_drips_forever(fake_server):
    def forever():
        while True:
            yield b"x" * 10

    fake_server.routes["/metrics"] = chunked(forever, delay_s=0.05, stop=fake_server.stop)

    started = time.monotonic()
    error = fail(f"{fake_server.base}/metrics", FetchPolicy(total_timeout_s=0.6))

    assert error.kind == "timeout"
    assert time.monotonic() - started < 2


def test_body_that_never_ends_hits_the_size_cap(fake_server):
    def forever():
        while True:
            yield b"y" * 65536

    fake_server.routes["/metrics"] = chunked(forever, stop=fake_server.stop)

    error = fail(f"{fake_server.base}/metrics", FetchPolicy(max_bytes=1_000_000))

    assert error.kind == "too_large"
    assert "1000000" in str(error)


def test_declared_length_over_the_cap_is_refused_before_reading(fake_server):
    fake_server.routes["/metrics"] = reply(200, b"z" * 2048)

    error = fail(f"{fake_server.base}/metrics", FetchPolicy(max_bytes=1024))

    assert error.kind == "too_large"


@pytest.mark.parametrize("status", [401, 404, 500, 503])
def test_http_errors_carry_the_status(fake_server, status):
    fake_server.routes["/metrics"] = reply(status, b"nope")

    error = fail(f"{fake_server.base}/metrics")

    assert error.kind == "http_status"
    assert error.status_code == status
    assert str(status) in str(error)


def test_same_host_redirect_is_followed(fake_server):
    fake_server.routes["/old"] = reply(302, b"", {"Location": "/metrics"})
    fake_server.routes["/metrics"] = reply(200, b"up 1\n")

    result = fetch(f"{fake_server.base}/old", policy=FAST, token=TOKEN)

    assert result.body == b"up 1\n"
    assert fake_server.seen[1]["Authorization"] == f"Bearer {TOKEN}"


def test_redirect_to_another_host_is_refused(fake_server):
    target = f"http://localhost:{fake_server.port}/metrics?token=abc"
    fake_server.routes["/metrics"] = reply(301, b"", {"Location": target})

    error = fail(f"{fake_server.base}/metrics")

    assert error.kind == "redirect"
    assert "localhost" in str(error)
    assert "abc" not in str(error)
    assert len(fake_server.seen) == 1


def test_redirect_loop_stops_after_a_few_hops(fake_server):
    fake_server.routes["/a"] = reply(307, b"", {"Location": "/b"})
    fake_server.routes["/b"] = reply(307, b"", {"Location": "/a"})

    error = fail(f"{fake_server.base}/a", FetchPolicy(max_redirects=3))

    assert error.kind == "redirect"
    assert len(fake_server.seen) == 4


def test_the_address_is_checked_again_on_every_redirect_hop(fake_server):
    fake_server.routes["/old"] = reply(302, b"", {"Location": "/metrics"})
    fake_server.routes["/metrics"] = reply(200, b"ok")
    calls = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["127.0.0.1"]

    fetch(f"http://metrics.internal:{fake_server.port}/old", policy=FetchPolicy(resolver=resolver))

    assert calls == ["metrics.internal", "metrics.internal"]


def test_connects_to_the_checked_address_and_keeps_the_host_header(fake_server):
    fake_server.routes["/metrics"] = reply(200, b"ok")

    fetch(
        f"http://metrics.internal:{fake_server.port}/metrics",
        policy=FetchPolicy(resolver=lambda host, port: ["127.0.0.1"]),
    )

    assert fake_server.seen[0]["Host"] == f"metrics.internal:{fake_server.port}"


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        pytest.param("ftp://127.0.0.1/metrics", "invalid_url", id="ftp"),
        pytest.param("file:///etc/passwd", "invalid_url", id="file"),
        pytest.param("http://user:pw@127.0.0.1:9/metrics", "invalid_url", id="credentials"),
        pytest.param("http:///metrics", "invalid_url", id="no-host"),
        pytest.param("http://169.254.169.254/latest/meta-data/", "forbidden_address", id="imds"),
        pytest.param("http://[fd00:ec2::254]/latest/", "forbidden_address", id="imds-v6"),
        pytest.param("http://[fe80::1]:8000/metrics", "forbidden_address", id="link-local-v6"),
        pytest.param(
            "http://[::ffff:169.254.169.254]/", "forbidden_address", id="v4-mapped-metadata"
        ),
        pytest.param("http://0.0.0.0:8000/metrics", "forbidden_address", id="unspecified"),
    ],
)
def test_refused_urls_never_connect(url, kind):
    error = fail(url)

    assert error.kind == kind


def test_a_name_resolving_to_the_metadata_address_is_refused():
    policy = FetchPolicy(resolver=lambda host, port: ["10.1.2.3", "169.254.169.254"])

    error = fail("http://sneaky.example/metrics", policy)

    assert error.kind == "forbidden_address"
    assert "169.254.169.254" in str(error)


@pytest.mark.parametrize(
    ("entries", "host", "resolved", "allowed"),
    [
        pytest.param(["10.0.0.0/8"], "127.0.0.1", ["127.0.0.1"], False, id="outside-cidr"),
        pytest.param(["127.0.0.0/8"], "127.0.0.1", ["127.0.0.1"], True, id="inside-cidr"),
        pytest.param(["10.0.0.0/8"], "gpu1.lan", ["10.0.3.4"], True, id="name-into-cidr"),
        pytest.param(["10.0.0.0/8"], "gpu1.lan", ["10.0.3.4", "8.8.8.8"], False, id="one-outside"),
        pytest.param(["gpu1.lan"], "gpu1.lan", ["192.168.1.9"], True, id="hostname-listed"),
        pytest.param([".lan"], "gpu7.lan", ["192.168.1.9"], True, id="domain-suffix"),
        pytest.param(["gpu1.lan"], "gpu2.lan", ["192.168.1.9"], False, id="other-hostname"),
        pytest.param(["gpu1.lan"], "gpu1.lan", ["169.254.169.254"], False, id="metadata-always"),
        pytest.param([], "gpu1.lan", ["192.168.1.9"], False, id="empty-allows-nothing"),
        pytest.param(None, "gpu1.lan", ["192.168.1.9"], True, id="anywhere"),
        pytest.param(None, "gpu1.lan", ["169.254.169.254"], False, id="anywhere-but-metadata"),
    ],
)
def test_allowlist(entries, host, resolved, allowed):
    allowlist = Allowlist.anywhere() if entries is None else Allowlist.parse(entries)
    policy = FetchPolicy(allowlist=allowlist, resolver=lambda h, p: list(resolved))
    url = parse_url(f"http://{host}:8000/metrics")

    if allowed:
        assert guard(url, policy) == resolved[0]
    else:
        with pytest.raises(FetchError) as info:
            guard(url, policy)
        assert info.value.kind == "forbidden_address"
