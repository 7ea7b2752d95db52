"""Every series key a target kind's tiles, charts and default alert rules read is in the one key
table (monitoring/scrape/keys.py): a key typed wrong in the web side would show or watch nothing."""

from __future__ import annotations

import pytest

from monitoring import charts
from monitoring.polling.run import OVERDUE_SERIES
from monitoring.scrape.keys import BY_KEY
from monitoring.scrape.series import parse_series_id
from monitoring.targets import kinds
from monitoring.targets.kinds import RuleContext


def read_by(kind: kinds.Kind) -> set[str]:
    """The series ids the kind's tiles, charts, rules and busy flag read."""
    read: list[str] = []
    kind.tiles(lambda key: read.append(key), True)
    lines = charts.ChartLines(kv_plan_pct=90, ttft_plan_ms=1, ttft_slo_ms=1, itl_plan_ms=1)
    read += [s for chart in kind.charts(lines) for s in chart.series]
    read += [r.series for r in kind.default_rules(RuleContext(ttft_threshold_s=1.0))]
    return {s for s in (*read, kind.busy_key) if s}


@pytest.mark.parametrize("name", list(kinds.REGISTRY))
def test_every_key_a_kind_reads_is_in_the_key_table(name):
    keys = {parse_series_id(sid)[0] for sid in read_by(kinds.get(name))}

    assert keys, "the kind reads no series"
    assert keys - set(BY_KEY) == set()


def test_the_poller_own_series_are_in_the_key_table():
    assert {"poll.up", "poll.consecutive_failures", "poll.missed", OVERDUE_SERIES} <= set(BY_KEY)
