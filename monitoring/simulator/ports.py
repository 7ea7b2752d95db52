"""Choose the simulator's base port, so that two checkouts on one machine can both run it."""

from __future__ import annotations

import socket

# The simulator listens on the base port and the next few (see server.py); a block this wide
# leaves room for more simulated servers without another search.
PORT_SPAN = 16


def block_is_free(base_port: int, span: int = PORT_SPAN, host: str = "127.0.0.1") -> bool:
    """Return True when every port in [base_port, base_port + span) can be bound on `host`."""
    if base_port < 1 or base_port + span > 65536:
        return False
    for port in range(base_port, base_port + span):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError:
                return False
    return True


def free_base_port(preferred: int, span: int = PORT_SPAN, host: str = "127.0.0.1") -> int:
    """Return `preferred` when its block is free, else the first free block above it."""
    for base_port in range(preferred, 65536 - span, span):
        if block_is_free(base_port, span, host):
            return base_port
    raise OSError(f"no block of {span} free ports on {host} at or above {preferred}")


if __name__ == "__main__":  # `python -m monitoring.simulator.ports 9400` prints a free base port
    import sys

    print(free_base_port(int(sys.argv[1]) if len(sys.argv) > 1 else 9400))
