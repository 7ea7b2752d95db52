"""Webhook signatures: how a receiver knows a delivery comes from this ServePlan, unchanged.

Each delivery carries `X-ServePlan-Signature: t=<unix seconds>,v1=<hex>` where `<hex>` is the
HMAC-SHA256 of `"<t>." + <raw body bytes>` keyed with the rule's secret (UTF-8). A receiver
recomputes it over the raw body, compares in constant time, and refuses a `t` older than a few
minutes (replays). See docs/monitoring.md.
"""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "X-ServePlan-Signature"


def webhook_signature(secret: str, body: bytes, *, now_s: int | None = None) -> str:
    """Return the signature header's value for `body` sent at `now_s` (default: now)."""
    ts = int(time.time()) if now_s is None else now_s
    digest = hmac.new(secret.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={ts},v1={digest}"


def signature_valid(secret: str, body: bytes, header: str, *, max_age_s: int = 300) -> bool:
    """Return whether `header` signs `body` with `secret` within `max_age_s` (receivers' side,
    used by the tests and as the reference for receivers)."""
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    try:
        ts = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(time.time() - ts) > max_age_s:
        return False
    expected = webhook_signature(secret, body, now_s=ts).split("v1=", 1)[1]
    return hmac.compare_digest(expected, parts.get("v1", ""))
