"""How many database queries one poll makes (a GPU target of 8 GPUs, answered by dcgm text)."""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitoring import tasks
from monitoring.models import Target
from tests.monitoring.conftest import FIXTURES

pytestmark = [pytest.mark.django_db, pytest.mark.enable_socket]

PAYLOAD = (FIXTURES / "gpu" / "dcgm_h100_mig_k8s_issue512.txt").read_bytes()


def _poll(target: Target, slot: int) -> CaptureQueriesContext:
    with CaptureQueriesContext(connection) as queries:
        tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": slot})
    return queries


def test_a_steady_gpu_poll_makes_a_bounded_number_of_queries(make_target, http_server):
    base, script = http_server
    script.route = lambda path: (200, {"Content-Type": "text/plain"}, [PAYLOAD])
    target = make_target(kind="gpu", base_url=f"{base}/metrics", poll_interval_s=15)
    slot = int(time.time())
    _poll(target, slot - 30)  # the first poll creates the target's series
    _poll(target, slot - 15)

    queries = _poll(target, slot)

    sql = [q["sql"] for q in queries.captured_queries]
    # The target (and its token), the reach policy (inventory hosts, allowlist), the stored poll
    # (target row, samples) and its alerts (rules, states, events), one write for /metrics.
    assert len(sql) <= 12, "\n".join(s[:120] for s in sql)
    assert sum("core_opscounter" in s for s in sql) == 1
    assert sum(s.startswith('INSERT INTO "monitoring_sample"') for s in sql) <= 1
