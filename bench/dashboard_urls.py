"""The requests one refresh of a dashboard page makes, read from its HTML as dashboard.js does.

Shared by the load benchmark's users (load_users.py) and its unloaded cost per request
(bench_load.py), which must not import locust (it patches the standard library on import).
"""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import quote

_ATTR = re.compile(r'\bdata-(series|series-url|state-url|refresh-url)="([^"]*)"')


def dashboard_calls(html: str) -> tuple[list[str], list[str]]:
    """Return (JSON URLs, panel HTML URLs) one refresh of this dashboard page requests."""
    found: dict[str, list[str]] = {}
    for key, value in _ATTR.findall(html):
        found.setdefault(key, []).append(unescape(value))
    wanted: list[str] = []
    for series in found.get("series", []):
        for part in _split_series(series):
            if part not in wanted:
                wanted.append(part)
    json_urls = []
    for url in found.get("series-url", [])[:1]:
        if wanted:
            json_urls.append(f"{url}?series={quote(','.join(wanted))}&range=1h")
    json_urls += found.get("state-url", [])[:1]
    return json_urls, found.get("refresh-url", [])


def _split_series(text: str) -> list[str]:
    out, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}" and depth > 0
        if ch == "," and depth == 0:
            if current.strip():
                out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out
