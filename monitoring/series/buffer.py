"""A bounded retry buffer for remote write: while the server is down, polls keep their samples
here and the next flush sends them, oldest first. Nothing is lost silently: a sample dropped
because the buffer is full, or refused by the server, is counted (WriteReport); so is one left
out because its target was deleted meanwhile, apart, since nobody wants it any more.

With a spool (a store outside this process, such as the database), what the server does not take
is moved there at once, so a worker that is stopped or killed during an outage loses nothing: any
worker's next flush sends the spooled samples first, since they are the oldest.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from .model import WriteBatch, WriteReport


class RetryLater(Exception):
    """The server could not take the samples now (down, 5xx, 429): keep them and retry."""


class Refused(Exception):
    """The server refused the samples for good (4xx): retrying cannot help, count them lost."""


Send = Callable[[Sequence[WriteBatch]], None]
MAX_ERRORS_KEPT = 5


class Outcome(StrEnum):
    WRITTEN = "written"
    DROPPED = "dropped"  # refused for good
    RETRY = "retry"  # the server could not take them now: still spooled
    BUSY = "busy"  # another worker is sending the spool: nothing sent, still spooled


@dataclass(frozen=True, slots=True)
class Replayed:
    """What became of the oldest spooled samples handed to the server in one request."""

    samples: int
    outcome: Outcome
    error: str = ""


@dataclass(frozen=True, slots=True)
class Kept:
    """What a spool did not keep of the batches handed to it."""

    dropped: int = 0  # samples deleted (the oldest spooled) to stay within the bound: lost
    target_deleted: int = 0  # samples of targets deleted meanwhile: nowhere to go, not a loss


def request_size(sizes: Iterable[int], max_samples: int) -> int:
    """Return how many leading batches of these sizes one request takes: as many as fit in
    `max_samples`, and always one."""
    taken = total = 0
    for size in sizes:
        if taken and total + size > max_samples:
            break
        taken, total = taken + 1, total + size
    return taken


def send_once(send: Send, batches: Sequence[WriteBatch]) -> tuple[Outcome, str]:
    """Send one request; return what became of it and the server's reason if not written."""
    try:
        send(batches)
    except RetryLater as exc:
        return Outcome.RETRY, str(exc)
    except Refused as exc:
        return Outcome.DROPPED, str(exc)
    return Outcome.WRITTEN, ""


class Spool(Protocol):
    """Batches waiting beyond this process, oldest first, shared by every worker."""

    def keep(self, batches: Sequence[WriteBatch], *, max_samples: int) -> Kept:
        """Keep `batches` (except those of targets deleted meanwhile); drop the oldest beyond
        `max_samples` in all; say how many samples went for each reason."""
        ...

    def replay(self, send: Send, *, max_samples: int) -> Replayed | None:
        """Send the oldest batches (up to `max_samples`, at least one batch) once, and forget
        them unless the server asked to retry; BUSY, sending nothing, while another worker
        sends them; None when nothing is spooled."""
        ...

    def pending(self) -> int:
        """Return the samples spooled, by every worker."""
        ...


@dataclass(slots=True)
class _Budget:
    """The requests one flush may still send (None: no limit)."""

    left: int | None

    def spend(self) -> bool:
        if self.left is None:
            return True
        if self.left < 1:
            return False
        self.left -= 1
        return True


class RetryBuffer:
    def __init__(
        self, *, max_samples: int, max_request_samples: int = 5_000, spool: Spool | None = None
    ) -> None:
        if max_samples < 1:
            raise ValueError("max_samples must be at least 1")
        self.max_samples = max_samples
        self.max_request_samples = max_request_samples
        self.spool = spool
        self._spooled = 0
        self._batches: deque[WriteBatch] = deque()
        self._pending = self._written = self._dropped = self._target_deleted = 0
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

    def flush(self, send: Send, *, max_requests: int | None = None) -> bool:
        """Send queued batches, oldest first, until empty, the server fails or `max_requests`
        were sent (a backlog drains over several polls instead of holding one); return True
        when nothing is left pending. With a spool, whatever is not sent is spooled before
        this returns: nothing waits in this process alone."""
        with self._lock:
            budget = _Budget(max_requests)
            done = self._replay_spool(send, budget) and self._send_memory(send, budget)
            if self.spool is not None:
                if self._batches:
                    self._spill()
                self._spooled = 0 if done else self.spool.pending()
            return done

    def _replay_spool(self, send: Send, budget: _Budget) -> bool:
        """Send the spooled batches first: they are older than any in memory."""
        if self.spool is None or (not self._spooled and not self.spool.pending()):
            return True
        while budget.spend():
            replayed = self.spool.replay(send, max_samples=self.max_request_samples)
            if replayed is None:
                return True
            if replayed.outcome is Outcome.BUSY:
                return False  # this worker's own samples queue behind the spooled ones
            if replayed.outcome is Outcome.WRITTEN:
                self._written += replayed.samples
            elif replayed.outcome is Outcome.DROPPED:
                self._count_refused(replayed.samples, replayed.error)
            else:
                self._errors.append(replayed.error)
                return False
        return False

    def _send_memory(self, send: Send, budget: _Budget) -> bool:
        while self._batches and budget.spend():
            taken = request_size(map(len, self._batches), self.max_request_samples)
            chunk = [self._batches[i] for i in range(taken)]
            count = sum(map(len, chunk))
            outcome, reason = send_once(send, chunk)
            if outcome is Outcome.RETRY:
                self._errors.append(reason)
                return False
            if outcome is Outcome.DROPPED:
                self._count_refused(count, reason)
            else:
                self._written += count
            for _ in chunk:
                self._batches.popleft()
            self._pending -= count
        return not self._batches

    def _count_refused(self, samples: int, reason: str) -> None:
        self._dropped += samples
        self._errors.append(f"refused, {samples} samples dropped: {reason}")

    def _spill(self) -> None:
        """Move the batches in memory to the spool (which keeps its own bound)."""
        assert self.spool is not None
        kept = self.spool.keep(list(self._batches), max_samples=self.max_samples)
        self._batches.clear()
        self._pending = 0
        self._target_deleted += kept.target_deleted
        if kept.dropped:
            self._dropped += kept.dropped
            self._errors.append(f"buffer full: {kept.dropped} samples dropped")

    def report(self) -> WriteReport:
        with self._lock:
            return WriteReport(
                written=self._written,
                pending=self._pending + self._spooled,
                dropped=self._dropped,
                target_deleted=self._target_deleted,
                errors=tuple(self._errors),
            )
