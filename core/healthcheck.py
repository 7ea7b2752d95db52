"""The container health check: `python -m core.healthcheck` exits 0 when /healthz says ok.

Under production settings a bare request to 127.0.0.1 fails twice: its Host header is not in
ALLOWED_HOSTS (DisallowedHost, 400) and plain HTTP is redirected to HTTPS. The probe names an
allowed host and says, as the TLS proxy does, that the client connection was HTTPS. No Django
import: it runs in a fresh interpreter every 30 seconds.
"""

import os
import sys
import urllib.error
import urllib.request

URL = os.environ.get("HEALTHCHECK_URL", "http://127.0.0.1:8000/healthz")


def _allowed_host() -> str:
    """Return a host name ALLOWED_HOSTS accepts (a literal entry, or one under a wildcard)."""
    for entry in os.environ.get("ALLOWED_HOSTS", "").split(","):
        entry = entry.strip()
        if entry == "*" or not entry:
            continue
        return "healthcheck" + entry if entry.startswith(".") else entry
    return "localhost"


def probe_headers() -> dict[str, str]:
    """Return the request headers (WSGI names) the probe sends."""
    return {"HTTP_HOST": _allowed_host(), "HTTP_X_FORWARDED_PROTO": "https"}


def main() -> int:
    headers = {
        name.removeprefix("HTTP_").replace("_", "-").title(): value
        for name, value in probe_headers().items()
    }
    request = urllib.request.Request(URL, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=4) as response:  # noqa: S310 - fixed URL
            return 0 if response.status == 200 else 1
    except (urllib.error.URLError, OSError) as exc:
        print(f"healthcheck: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
