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
    """The server refused the samples for good (4xx): retrying cannot help, count them lost
    (except `target_deleted` of them, which the sender had left out of the request)."""

    def __init__(self, message: str, *, target_deleted: int = 0) -> None:
        super().__init__(message)
        self.target_deleted = target_deleted


@dataclass(frozen=True, slots=True)
class LeftOut:
    """What a sender did not put in the request it sent (None from a sender: nothing)."""

    target_deleted: int = 0  # samples whose target was deleted before the request left


# Send one request of these batches; raise RetryLater or Refused when the server did not take it.
Send = Callable[[Sequence[WriteBatch]], LeftOut | None]
MAX_ERRORS_KEPT = 5


class Outcome(StrEnum):
    WRITTEN = "written"
    DROPPED = "dropped"  # refused for good
    RETRY = "retry"  # the server could not take them now: still spooled
    BUSY = "busy"  # another worker is sending the spool: nothing sent, still spooled


@dataclass(frozen=True, slots=True)
class Sent:
    """What became of samples handed to the server in one request (the oldest spooled ones,
    for a spool's replay)."""

    samples: int  # every sample handed over, `target_deleted` included
    outcome: Outcome
    error: str = ""
    target_deleted: int = 0  # left out of the request: their target was deleted first

    @property
    def offered(self) -> int:
        """The samples the request carried (written, or refused, as `outcome` says)."""
        return self.samples - self.target_deleted


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


def send_once(send: Send, batches: Sequence[WriteBatch]) -> Sent:
    """Send one request; say what became of it, with the server's reason if not written."""
    samples = sum(map(len, batches))
    try:
        left_out = send(batches) or LeftOut()
    except RetryLater as exc:  # nothing was taken: every batch is still pending
        return Sent(samples, Outcome.RETRY, str(exc))
    except Refused as exc:
        return Sent(samples, Outcome.DROPPED, str(exc), exc.target_deleted)
    return Sent(samples, Outcome.WRITTEN, "", left_out.target_deleted)


class Spool(Protocol):
    """Batches waiting beyond this process, oldest first, shared by every worker."""

    def keep(self, batches: Sequence[WriteBatch], *, max_samples: int) -> Kept:
        """Keep `batches` (except those of targets deleted meanwhile); drop the oldest beyond
        `max_samples` in all; say how many samples went for each reason."""
        ...

    def replay(self, send: Send, *, max_samples: int) -> Sent | None:
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
            if replayed.outcome is Outcome.RETRY:
                self._errors.append(replayed.error)
                return False
            self._count(replayed)
        return False

    def _send_memory(self, send: Send, budget: _Budget) -> bool:
        while self._batches and budget.spend():
            taken = request_size(map(len, self._batches), self.max_request_samples)
            chunk = [self._batches[i] for i in range(taken)]
            sent = send_once(send, chunk)
            if sent.outcome is Outcome.RETRY:
                self._errors.append(sent.error)
                return False
            self._count(sent)
            for _ in chunk:
                self._batches.popleft()
            self._pending -= sent.samples
        return not self._batches

    def _count(self, sent: Sent) -> None:
        """Count a request the server took or refused for good."""
        self._target_deleted += sent.target_deleted
        if sent.outcome is Outcome.WRITTEN:
            self._written += sent.offered
        elif sent.offered:
            self._dropped += sent.offered
            self._errors.append(f"refused, {sent.offered} samples dropped: {sent.error}")

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
