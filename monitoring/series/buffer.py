"""A bounded retry buffer for remote write: while the server is down, polls keep their samples
here and the next flush sends them, oldest first. Nothing is lost silently: a sample dropped
because the buffer is full, or refused by the server, is counted (WriteReport)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence

from .model import WriteBatch, WriteReport


class RetryLater(Exception):
    """The server could not take the samples now (down, 5xx, 429): keep them and retry."""


class Refused(Exception):
    """The server refused the samples for good (4xx): retrying cannot help, count them lost."""


Send = Callable[[Sequence[WriteBatch]], None]
MAX_ERRORS_KEPT = 5


class RetryBuffer:
    def __init__(self, *, max_samples: int, max_request_samples: int = 5_000) -> None:
        if max_samples < 1:
            raise ValueError("max_samples must be at least 1")
        self.max_samples = max_samples
        self.max_request_samples = max_request_samples
        self._batches: deque[WriteBatch] = deque()
        self._pending = self._written = self._dropped = 0
        self._errors: deque[str] = deque(maxlen=MAX_ERRORS_KEPT)
        self._lock = threading.Lock()

    def add(self, batch: WriteBatch) -> int:
        """Queue a batch; return how many samples were dropped (oldest first) to make room."""
        with self._lock:
            self._batches.append(batch)
            self._pending += len(batch)
            dropped = 0
            while self._pending > self.max_samples and self._batches:
                oldest = self._batches.popleft()
                self._pending -= len(oldest)
                dropped += len(oldest)
            if dropped:
                self._dropped += dropped
                self._errors.append(f"buffer full: {dropped} samples dropped")
            return dropped

    def _next_request(self) -> list[WriteBatch]:
        chunk: list[WriteBatch] = []
        size = 0
        for batch in self._batches:
            if chunk and size + len(batch) > self.max_request_samples:
                break
            chunk.append(batch)
            size += len(batch)
        return chunk

    def flush(self, send: Send, *, max_requests: int | None = None) -> bool:
        """Send queued batches, oldest first, until empty, the server fails or `max_requests`
        were sent (a backlog drains over several polls instead of holding one); return True
        when nothing is left pending."""
        with self._lock:
            requests = 0
            while self._batches and (max_requests is None or requests < max_requests):
                requests += 1
                chunk = self._next_request()
                count = sum(len(b) for b in chunk)
                try:
                    send(chunk)
                except RetryLater as exc:
                    self._errors.append(str(exc))
                    return False
                except Refused as exc:
                    self._dropped += count
                    self._errors.append(f"refused, {count} samples dropped: {exc}")
                else:
                    self._written += count
                for _ in chunk:
                    self._batches.popleft()
                self._pending -= count
            return not self._batches

    def report(self) -> WriteReport:
        with self._lock:
            return WriteReport(
                written=self._written,
                pending=self._pending,
                dropped=self._dropped,
                errors=tuple(self._errors),
            )
