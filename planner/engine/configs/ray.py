"""The `ray start` flags the bundles emit (checked against the installed Ray's --help)."""

from __future__ import annotations

# Every `ray start` flag emitted (Ray 2.40–2.60, `ray start --help`); see allocate._ray_nodes.
RAY_START_FLAGS: frozenset[str] = frozenset(
    {
        "--head",
        "--port",
        "--num-gpus",
        "--dashboard-host",
        "--object-store-memory",
        "--address",
        "--block",
    }
)
