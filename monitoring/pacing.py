"""How often a target is polled, and how many of its polls did not happen.

A target whose polls are expensive failures (the time budget spent, a limit hit) is polled less
often: every 2, then 4 intervals, back to every interval at its first success (and its polls
share a few worker slots: monitoring.polling.pool). With hung or
hostile targets, that caps the worker time they take at a quarter of what a healthy target may
use, so the healthy ones keep their schedule. Cheap failures (refused, no DNS) keep the interval.

A missed poll is one that was due and never ran (expired in the queue, starved by other work, no
worker): the gap between two finished polls, in intervals, minus the one expected.

Every target polls on a grid of its own: the unix seconds `phase + k * interval`, where the phase
comes from its id (a golden-ratio sequence, so consecutive ids are spread evenly over the interval
and 200 targets of 15 s arrive about 13 a second, not 200 at once). Backoff keeps the grid: the
next slot is `factor` intervals on, never an arbitrary time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


# A new or rescheduled target's first poll comes no later than this, whatever its interval (a
# 1 h interval would otherwise show nothing for up to an hour).
FIRST_POLL_WITHIN_S = 60


def phase_s(target_id: int, interval_s: int) -> int:
    """Return the target's offset in its interval, in whole seconds (0 <= phase < interval)."""
    if interval_s <= 1:
        return 0
    return int(((target_id * _GOLDEN) % 1.0) * interval_s) % interval_s


def slot_at_or_after(t: float, interval_s: int, phase: int) -> int:
    """Return the first grid second `phase + k * interval_s` at or after `t`."""
    interval_s = max(1, interval_s)
    return math.ceil((t - phase) / interval_s) * interval_s + phase


@dataclass(frozen=True)
class SlotPlan:
    """What the scheduler does with one target at a tick."""

    slot: int | None  # the unix second its poll is due (never before now), or None: not yet
    next_poll_at: float  # when the one after is due (on the target's grid)


def plan_slot(
    *,
    target_id: int,
    interval_s: int,
    factor: int,
    next_poll_at: float | None,
    now: float,
    horizon: float,
) -> SlotPlan:
    """Return the target's due slot before `horizon` and its next one, on the target's grid.

    A new target (no next poll time) is queued for its first grid slot (less than one interval
    away); a late one (a tick came late) polls now and keeps its grid, so the slot after is
    exactly `factor` intervals on; one that fell a whole spacing behind (no worker) polls once at
    its next grid slot, not a backlog.
    """
    phase = phase_s(target_id, interval_s)
    spacing = max(1, interval_s) * max(1, factor)
    if next_poll_at is None:
        slot = slot_at_or_after(now, interval_s, phase)
        if slot - now > FIRST_POLL_WITHIN_S:
            # A long interval: the first poll comes within a minute (spread by the same
            # phase rule), the next one on the grid.
            slot = math.floor(now) + phase_s(target_id, FIRST_POLL_WITHIN_S)
            return SlotPlan(
                slot=slot, next_poll_at=float(slot_at_or_after(slot + 1, interval_s, phase))
            )
        return SlotPlan(slot=slot, next_poll_at=float(slot + spacing))
    slot = slot_at_or_after(next_poll_at, interval_s, phase)
    if slot + spacing <= now:
        slot = slot_at_or_after(now, interval_s, phase)
    if slot >= horizon:
        return SlotPlan(slot=None, next_poll_at=float(slot))
    return SlotPlan(slot=max(slot, math.floor(now)), next_poll_at=float(slot + spacing))
