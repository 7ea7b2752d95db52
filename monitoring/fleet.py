"""Fleet sums: every target's unlabelled latest values added up once per scheduler tick.

The overview's charts show sums over the whole fleet. Summing every target's raw samples at each
request cost seconds on a fleet of 200 (it read 240 polls x 200 targets per key); instead the
scheduler adds up the targets' `latest` values (one query of 200 small rows) at each tick and
stores one row, and the rollup job averages a minute of ticks into one row. A chart then reads
one row per point, whatever the fleet's size.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from monitoring.models import PollStatus, Target
from monitoring.series import remote_write as rw

TICK_STEP_S = rw.FLEET_TICK_S  # the scheduler's tick, which the fleet series is written at
# Ticks run late on a busy worker: the charts break their line only after 2.5 times this.
TICK_LATE_S = 15
MINUTE_STEP_S = 60
# A target counts while its last success is this recent (in poll intervals), as "up" on the
# overview: a target that missed one poll still adds its last values, one that is down does not.
FRESH_INTERVALS = 3


def fleet_values(*, now: datetime) -> dict[str, float]:
    """Return the sum of each unlabelled latest value over the enabled targets that are up."""
    # Polled targets only: a read-only target's poll keeps latest values too, but its store
    # sums its series itself (monitoring.stores.routing), and would count it twice.
    rows = Target.objects.filter(enabled=True, last_status=PollStatus.OK, selector="").values_list(
        "latest", "last_success_at", "poll_interval_s"
    )
    sums: dict[str, float] = defaultdict(float)
    for latest, last_success_at, interval_s in rows:
        if last_success_at is None or now - last_success_at > timedelta(
            seconds=FRESH_INTERVALS * interval_s
        ):
            continue
        for key, value in (latest or {}).items():
            if "{" not in key and isinstance(value, int | float) and math.isfinite(value):
                sums[key] += value
    return {key: round(value, 6) for key, value in sums.items()}


def covers_polled_fleet(target_ids: Iterable[int]) -> bool:
    """Whether the ids hold every polled target: the fleet's stored sums are exactly theirs."""
    polled = Target.objects.filter(selector="").values_list("pk", flat=True)
    return set(target_ids) >= set(polled)
