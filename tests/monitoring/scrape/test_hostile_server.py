"""Each hostile behaviour costs one poll at most its budget and fails with a kind that says why.

(The schedule of the other targets under a real worker: tests/monitoring/integration/
test_hostile_targets.py.)
"""

from __future__ import annotations

import time

import pytest

from monitoring.scrape import FetchPolicy, scrape_once
from tests.monitoring.hostile import hostile_server

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

BUDGET_S = 2.0
POLICY = FetchPolicy(connect_timeout_s=1.0, total_timeout_s=BUDGET_S)


@pytest.fixture(scope="module")
def hostile():
    with hostile_server() as base:
        yield base


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/huge", "limit"),  # 150k label sets: over sample_limit, refused before parsing
        ("/labels", "limit"),  # one line with 5,000 labels
        ("/bomb", "too_large"),  # 100 MB behind 100 KB of gzip: the decoded size is capped
        ("/drip", "timeout"),  # a line every 0.5 s, forever
        ("/hang", "timeout"),  # accept, never answer
    ],
)
def test_a_hostile_target_fails_within_its_budget(hostile, path, kind):
    # The size cap, not the clock, must stop the bomb: on a busy machine decoding the first
    # megabytes can take longer than the normal budget, so that case gets a generous one.
    budget_s = 4 * BUDGET_S if kind == "too_large" else BUDGET_S
    policy = FetchPolicy(connect_timeout_s=1.0, total_timeout_s=budget_s)
    started = time.monotonic()
    result = scrape_once(f"{hostile}{path}", "vllm", policy=policy)
    elapsed_s = time.monotonic() - started

    assert not result.ok
    assert [e.kind for e in result.errors] == [kind]
    # Within its budget (plus the scheduling noise of a busy machine), never two budgets.
    assert elapsed_s < 2 * budget_s


def test_a_healthy_target_on_the_same_server_is_read(hostile):
    result = scrape_once(f"{hostile}/ok/1", "vllm", policy=POLICY)

    assert result.ok, result.errors
    assert any(s.key == "vllm.requests_running" for s in result.samples)


def test_a_hung_ray_dashboard_is_one_budget(hostile):
    started = time.monotonic()
    result = scrape_once(f"{hostile}/hang", "ray", policy=POLICY)

    assert not result.ok
    assert time.monotonic() - started < 2 * BUDGET_S  # discovery asks two endpoints
