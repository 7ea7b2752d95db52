"""The same reads and writes against every series store: the embedded tables, Prometheus and
VictoriaMetrics. What a poll wrote must come back the same through the series API, the fleet
sums, the Ray page, polling health, plan vs reality, evidence and alerts."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from unittest import mock

import httpx
import pytest

from monitoring import selectors, services, stores, tasks
from monitoring.models import AlertEvent, AlertRule, TargetKind
from monitoring.reality import observation
from monitoring.reality.evidence import measure_window
from monitoring.scrape.series import Sample
from monitoring.series import SeriesMatch, WriteBatch, WriteSample
from monitoring.series import remote_write as rw
from monitoring.services import PollOutcome, poll_record_success
from monitoring.simulator.vllm_sim import VllmProfile
from monitoring.tasks import fleet_tick_record
from tests.monitoring.simulated import feed_simulated

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.enable_socket]

RUNNING = "vllm.requests_running"
MODEL = (("model", "m"),)


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)


def _poll(target, ts, *samples: Sample) -> None:
    poll_record_success(target=target, ts=ts, outcome=PollOutcome(samples=list(samples)))


def _polls(target, count=10, step_s=15):
    """Store `count` polls `step_s` apart, ending now: RUNNING = i, and i * 2 for model m."""
    end = _now()
    times = [end - timedelta(seconds=step_s * (count - 1 - i)) for i in range(count)]
    for i, ts in enumerate(times):
        _poll(target, ts, Sample(RUNNING, (), float(i)), Sample(RUNNING, MODEL, 2.0 * i))
    return times


def test_a_poll_is_read_back_poll_by_poll_in_its_window(backend, make_target):
    target = make_target(poll_interval_s=15)
    times = _polls(target)

    def read():
        return stores.current().window(
            stores.ref(target), [RUNNING, "poll.up"], times[0], times[-1]
        )[RUNNING]

    window = backend.eventually(lambda: len(read()) == len(times) and read())

    assert window == [(ts, float(i)) for i, ts in enumerate(times)]  # unlabelled only
    series = stores.current().window(stores.ref(target), [RUNNING, "poll.up"], times[0], times[-1])
    assert series["poll.up"] == [(ts, 1.0) for ts in times]


def test_the_series_api_answers_every_label_set_or_the_one_asked_for(
    backend, make_target, viewer_api
):
    target = make_target(poll_interval_s=15)
    _polls(target)
    url = f"/api/v1/monitoring/targets/{target.pk}/series/"

    def read(series):
        answer = viewer_api.get(url, {"series": series, "range": "15m"})
        assert answer.status_code == 200
        return answer.json()

    data = backend.eventually(lambda: len(read(RUNNING)["series"]) == 2 and read(RUNNING))
    values = {s["id"]: [v for v in s["v"] if v is not None] for s in data["series"]}
    assert values == {
        RUNNING: [float(i) for i in range(10)],
        f'{RUNNING}{{model="m"}}': [2.0 * i for i in range(10)],
    }
    assert {s["target"] for s in data["series"]} == {target.pk}
    only = read(f'{RUNNING}{{model="m"}}')["series"]
    assert [s["labels"] for s in only] == [{"model": "m"}]
    assert read(f'{RUNNING}{{model="other"}}')["series"] == []


def test_a_poll_on_a_bucket_boundary_counts_in_one_bucket(backend, make_target):
    target = make_target(poll_interval_s=15)
    times = _polls(target)  # whole seconds, 15 s apart
    start, end = times[0] - timedelta(seconds=15), times[-1] + timedelta(seconds=15)
    buckets = int((end - start).total_seconds() // 5)  # 5 s buckets: every poll on a boundary

    def read():
        answer = stores.current().range(
            [stores.ref(target)], [SeriesMatch(RUNNING, "")], start, end, buckets
        )
        return [v for s in answer.series for v in s.values if v is not None]

    assert backend.eventually(lambda: len(read()) >= len(times) and read()) == [
        float(i) for i in range(len(times))
    ]


def test_fleet_series_sums_the_targets_per_time_bucket(backend, make_target, viewer_api):
    a, b = make_target(poll_interval_s=15), make_target(poll_interval_s=15)
    end = _now()
    for i in range(5):
        ts = end - timedelta(seconds=15 * (4 - i))
        _poll(a, ts, Sample(RUNNING, (), 1.0), Sample(RUNNING, MODEL, 100.0))
        _poll(b, ts, Sample(RUNNING, (), 2.0))
        # The scheduler's tick: the embedded store keeps the fleet's sums of the latest values
        # then (monitoring.fleet); the servers sum the samples themselves.
        fleet_tick_record(now=ts)

    def read():
        answer = viewer_api.get("/api/v1/monitoring/fleet-series/", {"series": RUNNING})
        assert answer.status_code == 200
        series = answer.json()["series"]
        return series if [v for v in series[0]["v"] if v is not None] else None

    series = backend.eventually(
        lambda: (s := read()) and len([v for v in s[0]["v"] if v]) == 5 and s
    )

    assert [s["key"] for s in series] == [RUNNING]
    assert [v for v in series[0]["v"] if v is not None] == [3.0] * 5  # labelled rows not summed


def test_the_ray_page_shows_the_labelled_values_of_the_last_poll_only(
    backend, make_target, viewer_api
):
    target = make_target(kind=TargetKind.RAY, poll_interval_s=15)
    end = _now()
    cpu = "ray.node.cpu_utilization_pct"
    _poll(target, end - timedelta(seconds=15), Sample(cpu, (("node", "old"),), 10.0))
    _poll(target, end, Sample(cpu, (("node", "n1"),), 55.0), Sample(cpu, (("node", "n2"),), 5.0))
    url = f"/api/v1/monitoring/targets/{target.pk}/state/"

    def nodes():
        answer = viewer_api.get(url)
        assert answer.status_code == 200
        return {n["node"]: n.get("cpu_utilization_pct") for n in answer.json()["ray"]["nodes"]}

    assert backend.eventually(nodes) == {"n1": 55.0, "n2": 5.0}


def test_missed_polls_reach_polling_health(backend, make_target):
    target = make_target(poll_interval_s=15)
    end = _now()
    _poll(target, end - timedelta(seconds=90))
    _poll(target, end)  # 90 s after the last: five polls were missed
    target.refresh_from_db()
    assert target.missed_polls == 5

    health = backend.eventually(lambda: selectors.polling_health().missed_last_hour)

    assert health == 5


def test_plan_vs_reality_and_evidence_read_what_the_polls_wrote(backend, make_target):
    target = make_target(poll_interval_s=15)
    written = []
    real_write = stores.current().write

    def recording(batch):
        written.append(batch)
        real_write(batch)

    store = stores.current()
    store.write = recording  # the same store: only watched
    try:
        profile = VllmProfile(name="r", model="m", base_rps=3.0, seed=3)
        feed_simulated(target, profile, polls=30, step_s=15)
    finally:
        del store.write
    start, end = written[0].ts, written[-1].ts
    # What the window must hold: every unlabelled finite sample written, per poll.
    expected: dict[str, list] = {key: [] for key in observation.OBSERVED_KEYS}
    for batch in written:
        for sample in batch.samples:
            if not sample.labels and sample.key in expected:
                expected[sample.key].append((batch.ts, sample.value))

    def complete():
        window = stores.current().window(stores.ref(target), observation.OBSERVED_KEYS, start, end)
        return all(len(window[k]) == len(expected[k]) for k in expected)

    backend.eventually(complete)
    seen = observation.observe(target, start, end)
    # VictoriaMetrics keeps about 12 significant digits of a float: equal up to that.
    want = asdict(observation.observation(target, expected))
    got = asdict(seen)
    for name in ("served", "target_name"):
        assert got.pop(name) == want.pop(name)
    assert got == pytest.approx(want, rel=1e-9)
    assert seen.ttft_p95_ms is not None
    measured = {m.kind: m.value for m in measure_window(target, start, end)}
    assert set(measured) >= {"ttft_p95", "itl_p95", "completion_rate"}


def test_an_alert_opens_from_a_real_poll_and_its_samples_are_stored(
    backend, make_target, simulator
):
    vllm = next(t for t in simulator.targets() if t.kind == "vllm")
    target = make_target(base_url=vllm.base_url, poll_interval_s=15)
    AlertRule.objects.create(
        target=target, name="anything running", series="poll.up", comparison="ge", threshold=1
    )

    tasks.poll_target.apply(kwargs={"target_id": target.pk, "slot": int(_now().timestamp())})

    event = AlertEvent.objects.get(target=target, rule__name="anything running")
    assert event.value == 1.0
    target.refresh_from_db()
    at = target.last_success_at
    up = backend.eventually(
        lambda: stores.current().window(stores.ref(target), ["poll.up"], at, at)["poll.up"]
    )
    assert up == [(at, 1.0)]


def test_a_write_under_way_at_the_delete_is_deleted_by_the_second_delete(backend, make_target):
    """A poll that committed just before its target's deletion sends after the first delete:
    its series are back on the server until the second delete (queued by the deletion)."""
    if backend.server is None:
        pytest.skip("the embedded store deletes the rows with the target, in one transaction")
    gone = make_target(poll_interval_s=15)
    times = _polls(gone)
    ref, store = stores.ref(gone), stores.current()
    later = times[-1] + timedelta(seconds=15)

    def polls() -> int:
        return len(store.window(ref, [RUNNING], times[0], later)[RUNNING])

    backend.eventually(lambda: polls() == 10)
    under_way = rw.encode(
        [WriteBatch(target=ref, ts=later, samples=(WriteSample(RUNNING, (), 99.0),))]
    )
    with mock.patch.object(tasks.forget_series, "apply_async") as queued:
        services.target_delete(target=gone)
    assert backend.eventually(lambda: polls() == 0)

    httpx.post(
        backend.server.write_url, content=under_way, headers=rw.HEADERS, timeout=10
    ).raise_for_status()  # the request that had left before the delete arrives after it

    assert backend.eventually(lambda: polls() == 1)  # one poll's series is back
    assert queued.call_args.kwargs["countdown"] == store.polled.forget_again_s
    tasks.forget_series.apply(kwargs=queued.call_args.kwargs["kwargs"])  # after the countdown
    assert backend.eventually(lambda: polls() == 0)


def test_deleting_a_target_deletes_its_series_in_the_store(backend, make_target, planner_api):
    gone, kept = make_target(poll_interval_s=15), make_target(poll_interval_s=15)
    polled = {gone.pk: _polls(gone), kept.pk: _polls(kept)}
    refs = {t.pk: stores.ref(t) for t in (gone, kept)}
    store = stores.current()

    def polls_of(target_id: int) -> int:
        times = polled[target_id]
        return len(store.window(refs[target_id], [RUNNING], times[0], times[-1])[RUNNING])

    backend.eventually(lambda: polls_of(gone.pk) == polls_of(kept.pk) == 10)

    response = planner_api.delete(f"/api/v1/monitoring/targets/{gone.pk}/")

    assert response.status_code == 204
    assert backend.eventually(lambda: polls_of(gone.pk) == 0)
    assert polls_of(kept.pk) == 10
