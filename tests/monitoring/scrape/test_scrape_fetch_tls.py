"""HTTPS with the address pinned: the certificate is still checked against the URL's host."""

from __future__ import annotations

import datetime as dt
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from monitoring.scrape.errors import FetchError
from monitoring.scrape.fetch import FetchPolicy, fetch

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]


def _cert(tmp: Path) -> tuple[Path, Path, Path]:
    """Write a CA and a server certificate for `metrics.internal` signed by it."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        # Python 3.13 verifies strictly (VERIFY_X509_STRICT): key identifiers and usage.
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "metrics.internal")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("metrics.internal")]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = tmp / "ca.pem", tmp / "cert.pem", tmp / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture
def https_server(tmp_path) -> Iterator[tuple[int, Path, list[str]]]:
    ca, cert, key = _cert(tmp_path)
    hosts: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            hosts.append(self.headers["Host"])
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"up 1\n")

        def log_message(self, *args: Any) -> None:
            return

    class Server(ThreadingHTTPServer):
        daemon_threads = True

    httpd = Server(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1], ca, hosts
    finally:
        httpd.shutdown()
        httpd.server_close()


def loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


def test_pinned_https_verifies_the_certificate_of_the_url_host(https_server):
    port, ca, hosts = https_server
    policy = FetchPolicy(resolver=loopback, verify_tls=str(ca), total_timeout_s=3)

    result = fetch(f"https://metrics.internal:{port}/metrics", policy=policy)

    assert result.body == b"up 1\n"
    assert hosts == [f"metrics.internal:{port}"]


def test_certificate_for_another_name_is_a_tls_error(https_server):
    port, ca, _hosts = https_server
    policy = FetchPolicy(resolver=loopback, verify_tls=str(ca), total_timeout_s=3)

    with pytest.raises(FetchError) as info:
        fetch(f"https://other.internal:{port}/metrics", policy=policy)

    assert info.value.kind == "tls"
