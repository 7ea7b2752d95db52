"""Series queries pick raw or rollup by range and downsample; the overview sorts by trouble."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from monitoring.models import AlertEvent, AlertRule, PollStatus, Target
from monitoring.selectors import SeriesRequest, fleet_overview, parse_series_requests
from monitoring.stores.embedded.queries import series_query
from monitoring.stores.embedded.retention import rollup_run
from tests.monitoring.factories import write_series

pytestmark = pytest.mark.django_db


def test_a_day_at_5_s_is_downsampled_to_at_most_1000_points(make_target):
    target = make_target()
    end = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
    start = end - timedelta(hours=24)
    write_series(target, "vllm.requests_running", start=start, step_s=5, count=17_280)

    data = series_query(
        target_ids=[target.pk],
        requests=[SeriesRequest("vllm.requests_running", None)],
        start=start,
        end=end,
    )

    (series,) = data["series"]
    assert 900 <= len(series["t"]) <= 1000
    assert series["t"] == sorted(series["t"])
    assert series["v"][0] == pytest.approx(sum(range(18)) / 18, rel=0.01)


def test_short_ranges_read_raw_and_long_ranges_read_rollups_plus_recent_raw(make_target):
    target = make_target()
    now = timezone.now().replace(microsecond=0)
    start = now - timedelta(hours=24)
    write_series(target, "x", start=start, step_s=60, count=24 * 60, value=lambda i: 1.0)
    rollup_run(now=now - timedelta(hours=1))  # rolls up to the cursor, in bounded runs
    while rollup_run(now=now - timedelta(hours=1)):
        pass

    long = series_query(
        target_ids=[target.pk], requests=[SeriesRequest("x", None)], start=start, end=now
    )
    short = series_query(
        target_ids=[target.pk],
        requests=[SeriesRequest("x", None)],
        start=now - timedelta(hours=1),
        end=now,
    )

    assert long["source"] == "rollup"
    assert short["source"] == "raw"
    assert long["series"][0]["t"][-1] > (now - timedelta(minutes=10)).timestamp() * 1000
    assert set(long["series"][0]["v"]) == {1.0}


def test_a_series_with_labels_can_be_requested_exactly(make_target):
    target = make_target(kind="ray")
    now = timezone.now()
    for resource in ("GPU", "CPU"):
        write_series(
            target,
            "ray.cluster.resources_used",
            start=now - timedelta(minutes=5),
            step_s=15,
            count=4,
            labels=f'{{resource="{resource}"}}',
        )

    data = series_query(
        target_ids=[target.pk],
        requests=parse_series_requests(['ray.cluster.resources_used{resource="GPU"}']),
        start=now - timedelta(minutes=15),
        end=now,
    )

    assert [s["labels"] for s in data["series"]] == [{"resource": "GPU"}]


def test_the_overview_sorts_trouble_first(make_target):
    now = timezone.now()
    healthy = make_target(name="a-healthy")
    down = make_target(name="z-down")
    alerting = make_target(name="m-alerting")
    never = make_target(name="b-never")
    Target.objects.filter(pk__in=[healthy.pk, alerting.pk]).update(
        last_status=PollStatus.OK, last_poll_at=now, last_success_at=now
    )
    Target.objects.filter(pk=down.pk).update(
        last_status=PollStatus.ERROR, last_poll_at=now, last_error="connection refused"
    )
    rule = AlertRule.objects.filter(target=alerting).first()
    AlertEvent.objects.create(
        rule=rule, target=alerting, opened_at=now, value=1, last_value=1, message="m"
    )

    fleet = fleet_overview(now=now)

    assert [t.target.name for t in fleet.tiles] == [
        down.name,
        alerting.name,
        never.name,  # unknown comes before healthy
        healthy.name,
    ]
    assert fleet.totals["targets_down"] == 1
    assert fleet.totals["open_alerts"] == 1


def test_a_target_without_a_recent_success_is_stale(make_target):
    now = timezone.now()
    target = make_target(poll_interval_s=15)
    Target.objects.filter(pk=target.pk).update(
        last_status=PollStatus.OK, last_poll_at=now, last_success_at=now - timedelta(minutes=5)
    )

    (tile,) = fleet_overview(now=now).tiles

    assert tile.state == "stale"


def test_the_overview_page_makes_a_constant_number_of_queries(
    make_target, viewer_client, django_assert_max_num_queries
):
    now = timezone.now()
    for i in range(60):
        target = make_target(name=f"t{i:03d}", kind="ray" if i % 5 == 0 else "vllm")
        Target.objects.filter(pk=target.pk).update(
            last_status=PollStatus.OK,
            last_poll_at=now,
            last_success_at=now,
            latest={"vllm.requests_running": 3.0, "vllm.generation_tokens_per_s": 100.0},
        )

    with django_assert_max_num_queries(10):
        response = viewer_client.get("/monitoring/")
    with django_assert_max_num_queries(10):
        api = viewer_client.get("/api/v1/monitoring/overview/")

    assert response.status_code == 200
    assert api.json()["totals"]["requests_running"] == 48 * 3.0
