"""`ray start` lines with explicit --num-gpus; the head goes on the lighter machine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.engine.spec import Node

RAY_PORT = 6379
HEAD_OBJECT_STORE_BYTES = 8 * 1024**3  # keep the head light: cap its object store at 8 GiB

# Every `ray start` flag emitted (Ray 2.40–2.60, `ray start --help`).
RAY_START_FLAGS: frozenset[str] = frozenset(
    {"--head", "--port", "--num-gpus", "--dashboard-host", "--object-store-memory", "--address"}
)


def ray_start_commands(nodes: Sequence[Node]) -> list[dict[str, Any]]:
    """Return the head command then one worker command per remaining node."""
    if not nodes:
        return []
    head = min(nodes, key=lambda n: (n.usable_gpus, n.hostname))
    out = [
        {
            "host": head.hostname,
            "role": "head",
            "command": (
                f"ray start --head --port={RAY_PORT} --num-gpus={head.usable_gpus} "
                f"--dashboard-host=0.0.0.0 --object-store-memory={HEAD_OBJECT_STORE_BYTES}"
            ),
        }
    ]
    for node in nodes:
        if node.hostname == head.hostname:
            continue
        out.append(
            {
                "host": node.hostname,
                "role": "worker",
                "command": (
                    f"ray start --address={head.hostname}:{RAY_PORT} --num-gpus={node.usable_gpus}"
                ),
            }
        )
    return out
