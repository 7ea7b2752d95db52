"""How often a target is polled, and how many of its polls did not happen.

A target whose polls are expensive failures (the time budget spent, a limit hit) is polled less
often: every 2, then 4 intervals, back to every interval at its first success (and its polls
share a few worker slots: monitoring.pool). With hung or
hostile targets, that caps the worker time they take at a quarter of what a healthy target may
use, so the healthy ones keep their schedule. Cheap failures (refused, no DNS) keep the interval.

A missed poll is one that was due and never ran (expired in the queue, starved by other work, no
worker): the gap between two finished polls, in intervals, minus the one expected.
"""

from __future__ import annotations

# Failures that cost a worker their whole time budget or a full page's parse.
COSTLY_ERROR_KINDS = frozenset({"timeout", "limit", "too_large"})
MAX_BACKOFF_FACTOR = 4
# A gap this many times the expected spacing means polls were missed (scheduler ticks are 5 s
# apart, so a poll can land up to a tick late without being missed).
MISSED_TOLERANCE = 1.5


def backoff_factor(last_error_kind: str, consecutive_failures: int) -> int:
    """Return how many intervals to wait before the next poll (1 when healthy)."""
    if consecutive_failures < 1 or last_error_kind not in COSTLY_ERROR_KINDS:
        return 1
    return min(MAX_BACKOFF_FACTOR, 2**consecutive_failures)


def current_factor(last_status: str, last_error_kind: str, consecutive_failures: int) -> int:
    """Return the spacing, in intervals, after a target's last poll (its stored state)."""
    return backoff_factor(last_error_kind if last_status == "error" else "", consecutive_failures)


def missed_polls(gap_s: float, interval_s: float, factor: int = 1) -> int:
    """Return the polls missed in `gap_s` between two finished polls spaced `factor` intervals."""
    expected_s = interval_s * factor
    if interval_s <= 0 or gap_s <= expected_s * MISSED_TOLERANCE:
        return 0
    return max(0, round(gap_s / interval_s) - factor)
