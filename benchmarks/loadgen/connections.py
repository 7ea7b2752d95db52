"""One keep-alive connection per request in flight: a pool of single-connection clients.

httpx's own pool looks through all its connections for every request it places (httpcore's
_assign_requests_to_connections): at 64 in flight that was a third of the runner's CPU. A client
per slot, handed out from a free list, places each request in O(1); the free list is also what
caps the requests in flight (the closed loop's N, or a Poisson run's cap).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx


class ClientPool:
    """Hand out clients that each hold one connection; at most `limit` at once (None: any)."""

    def __init__(self, factory: Callable[[], httpx.AsyncClient], limit: int | None) -> None:
        self._factory = factory
        self._limit = limit
        self._free: list[httpx.AsyncClient] = []
        self._all: list[httpx.AsyncClient] = []
        self._freed = asyncio.Condition()

    async def acquire(self) -> httpx.AsyncClient:
        async with self._freed:
            while not self._free and self._limit is not None and len(self._all) >= self._limit:
                await self._freed.wait()
            if self._free:
                return self._free.pop()
            client = self._factory()
            self._all.append(client)
            return client

    async def release(self, client: httpx.AsyncClient) -> None:
        async with self._freed:
            self._free.append(client)
            self._freed.notify()

    def set_limit(self, limit: int | None) -> None:
        """Change the cap between levels (a sweep): the extra clients wait their turn."""
        self._limit = limit

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self._all))
        self._all.clear()
        self._free.clear()
