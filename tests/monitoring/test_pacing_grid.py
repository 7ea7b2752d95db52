"""The scheduler's grid (monitoring.pacing.plan_slot): pure, simulated tick by tick."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from monitoring import pacing

TICK_S = 5.0  # monitoring.tasks.SCHEDULER_INTERVAL_S


def _run(targets: dict[int, int], start: float, rounds: int) -> dict[int, list[int]]:
    """Tick the scheduler every 5 s for `rounds` of the longest interval; return slots per id."""
    next_at: dict[int, float | None] = dict.fromkeys(targets)
    slots: dict[int, list[int]] = defaultdict(list)
    end = start + rounds * max(targets.values())
    now = start
    while now < end:
        for target_id, interval_s in targets.items():
            plan = pacing.plan_slot(
                target_id=target_id,
                interval_s=interval_s,
                factor=1,
                next_poll_at=next_at[target_id],
                now=now,
                horizon=now + TICK_S,
            )
            next_at[target_id] = plan.next_poll_at
            if plan.slot is not None:
                slots[target_id].append(plan.slot)
        now += TICK_S
    return slots


@settings(max_examples=60, deadline=None)
@given(
    targets=st.dictionaries(
        st.integers(min_value=1, max_value=10**7),
        st.sampled_from([5, 10, 15, 30, 60, 7, 13]),
        min_size=1,
        max_size=40,
    ),
    start=st.floats(min_value=1.7e9, max_value=1.8e9, allow_nan=False),
)
def test_each_targets_slots_are_exactly_its_interval_apart_and_none_is_skipped(targets, start):
    slots = _run(targets, start, rounds=6)

    for target_id, interval_s in targets.items():
        mine = slots[target_id]
        assert len(mine) >= 5, target_id  # no target skipped
        assert mine[0] - start < interval_s  # the first poll within one interval
        assert all(b - a == interval_s for a, b in zip(mine, mine[1:], strict=False))
        assert {s % interval_s for s in mine} == {pacing.phase_s(target_id, interval_s)}


@settings(max_examples=60, deadline=None)
@given(
    first_id=st.integers(min_value=1, max_value=10**6),
    count=st.integers(min_value=1, max_value=400),
    interval_s=st.sampled_from([5, 10, 15, 30, 60]),
)
def test_a_fleet_of_consecutive_ids_is_spread_evenly_over_its_interval(first_id, count, interval_s):
    per_second = Counter(
        pacing.phase_s(target_id, interval_s) for target_id in range(first_id, first_id + count)
    )

    # 200 targets of 15 s: at most 16 polls start in any one second (13.3 on average), not 200.
    assert max(per_second.values()) <= math.ceil(count / interval_s) + 2


@given(
    target_id=st.integers(min_value=1, max_value=10**7),
    interval_s=st.integers(min_value=1, max_value=3600),
    factor=st.sampled_from([1, 2, 4]),
    behind_s=st.floats(min_value=0, max_value=10**5),
)
def test_a_late_target_keeps_its_grid_and_never_queues_a_backlog(
    target_id, interval_s, factor, behind_s
):
    now = 1.75e9
    phase = pacing.phase_s(target_id, interval_s)
    due = pacing.slot_at_or_after(now - behind_s, interval_s, phase)

    plan = pacing.plan_slot(
        target_id=target_id,
        interval_s=interval_s,
        factor=factor,
        next_poll_at=float(due),
        now=now,
        horizon=now + TICK_S,
    )

    assert (plan.next_poll_at - phase) % interval_s == 0
    assert plan.next_poll_at > now
    if plan.slot is not None:
        assert plan.slot >= math.floor(now)
        assert plan.slot < now + max(TICK_S, interval_s)


@settings(max_examples=60, deadline=None)
@given(
    target_id=st.integers(min_value=1, max_value=10**7),
    interval_s=st.sampled_from([120, 300, 3600]),
    start=st.floats(min_value=1.7e9, max_value=1.8e9, allow_nan=False),
)
def test_a_long_interval_polls_first_within_a_minute_then_on_its_grid(target_id, interval_s, start):
    mine = _run({target_id: interval_s}, start, rounds=4)[target_id]

    assert mine[0] - start < pacing.FIRST_POLL_WITHIN_S + TICK_S
    phase = pacing.phase_s(target_id, interval_s)
    assert 0 < mine[1] - mine[0] <= interval_s
    assert all(s % interval_s == phase for s in mine[1:])
    assert all(b - a == interval_s for a, b in zip(mine[1:], mine[2:], strict=False))
