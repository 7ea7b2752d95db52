"""How monitoring matches one machine's names across sources.

The inventory, an exporter's `Hostname` label, Ray's node list and a plan's hosts may name one
machine `a800-node-1`, `A800-Node-1` or `a800-node-1.dc1.example.com`: they are matched by the
first label of the name, case-insensitive.
"""

from __future__ import annotations


def short_hostname(hostname: str) -> str:
    """Return the name's first label, lower case ("a800-node-1" for "A800-Node-1.dc1.lan")."""
    return hostname.strip().lower().split(".", 1)[0]
