"""Per-target scrape limits in the manner of Prometheus' scrape config, applied while parsing.

`sample_limit`, `label_limit`, `label_name_length_limit` and `label_value_length_limit` mean what
they mean in Prometheus: a page over any of them fails the whole poll (nothing is stored), so a
target cannot flood storage or a worker's CPU. The page is checked line by line before the
Prometheus parser sees it, so a page with 150k label sets is refused after a cheap scan, not
after a full parse. The body size cap lives in fetch (FetchPolicy.max_bytes), while streaming.

Limits travel with the poll in a context variable, so every extractor of every target kind
applies them through `parse.parse` without passing them along.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .errors import LimitError


@dataclass(frozen=True, slots=True, kw_only=True)
class ScrapeLimits:
    """What one page may hold; 0 switches a limit off (as in Prometheus)."""

    sample_limit: int = 50_000
    label_limit: int = 64
    label_name_length_limit: int = 256
    label_value_length_limit: int = 2048
    # Exporters a discovery (Ray's service discovery) may make one poll ask.
    max_exporters: int = 64

    @property
    def max_line_chars(self) -> int:
        """The longest sample line the label limits allow (0: unlimited), checked before parsing."""
        if not (
            self.label_limit and self.label_name_length_limit and self.label_value_length_limit
        ):
            return 0
        per_label = self.label_name_length_limit + 2 * self.label_value_length_limit + 4
        return 1024 + self.label_limit * per_label  # the name and value fit in the 1 KiB

    def check_sample_count(self, count: int) -> None:
        if self.sample_limit and count > self.sample_limit:
            raise LimitError(f"the page has more than {self.sample_limit} samples (sample_limit)")

    def check_line(self, number: int, line: str) -> None:
        limit = self.max_line_chars
        if limit and len(line) > limit:
            raise LimitError(
                f"line {number} is longer than the label limits allow ({limit} characters)"
            )

    def check_labels(self, name: str, labels: dict[str, str]) -> None:
        if self.label_limit and len(labels) > self.label_limit:
            raise LimitError(
                f"a sample of {name} has {len(labels)} labels, more than {self.label_limit}"
                " (label_limit)"
            )
        for key, value in labels.items():
            if self.label_name_length_limit and len(key) > self.label_name_length_limit:
                raise LimitError(
                    f"a label name of {name} is longer than {self.label_name_length_limit}"
                    " characters (label_name_length_limit)"
                )
            if self.label_value_length_limit and len(value) > self.label_value_length_limit:
                raise LimitError(
                    f"label {key[:64]!r} of {name} is longer than {self.label_value_length_limit}"
                    " characters (label_value_length_limit)"
                )


DEFAULT_LIMITS = ScrapeLimits()
_current: contextvars.ContextVar[ScrapeLimits] = contextvars.ContextVar(
    "scrape_limits", default=DEFAULT_LIMITS
)


def current() -> ScrapeLimits:
    """Return the limits of the poll running in this context (the defaults outside a poll)."""
    return _current.get()


@contextmanager
def applied(limits: ScrapeLimits) -> Iterator[None]:
    """Apply `limits` to every page parsed inside the block (and in contexts copied from it)."""
    token = _current.set(limits)
    try:
        yield
    finally:
        _current.reset(token)
