"""A target deleted while another transaction writes rows that refer to it (a spooled remote
write, a poll): the delete locks the target's row first, so one of the two waits for the other
and neither fails at commit on the foreign key; a delete that comes second answers 404.

The PostgreSQL tests run each side in a thread of its own (its own connection): one holds its
transaction open, the other starts and is seen waiting for its lock (pg_blocking_pids), then
the first commits. Nothing is timed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection, transaction

from monitoring import services
from monitoring.models import Sample, SpooledWrite, Target, TargetSnapshot
from monitoring.scrape.series import Sample as ScrapedSample
from monitoring.series import TargetRef, WriteBatch, WriteSample
from monitoring.series.buffer import Kept
from monitoring.stores.spool import DatabaseSpool

pytestmark = pytest.mark.django_db

# Only how long a broken run takes to fail: every wait ends on an event or a lock seen.
TIMEOUT_S = 30.0
T0 = datetime(2026, 12, 2, 5, 0, tzinfo=UTC)


def _batch(target: Target, n: int) -> WriteBatch:
    ref = TargetRef(id=target.pk, name=target.name, kind=target.kind, interval_s=15)
    samples = tuple(WriteSample("vllm.running", (("model", f"m{j}"),), 1.0) for j in range(n))
    return WriteBatch(target=ref, ts=T0, samples=samples)


def _postgresql_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks between two connections: PostgreSQL")


class InThread:
    """`work` run in a thread of its own, so on a database connection of its own."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], Any]) -> None:
        try:
            self._value = work()
        except BaseException as exc:  # re-raised by result(), in the test's thread
            self._error = exc
        finally:
            connection.close()

    def result(self) -> Any:
        self._thread.join(TIMEOUT_S)
        assert not self._thread.is_alive(), "still waiting"
        if self._error is not None:
            raise self._error
        return self._value


class Held:
    """`work` run in a transaction of a thread of its own, left open until release()."""

    def __init__(self, work: Callable[[], Any]) -> None:
        self.pid: int | None = None
        self._done, self._release = threading.Event(), threading.Event()

        def run() -> Any:
            try:
                with transaction.atomic():
                    value = work()
                    with connection.cursor() as cursor:
                        cursor.execute("SELECT pg_backend_pid()")
                        self.pid = cursor.fetchone()[0]
                    self._done.set()
                    assert self._release.wait(TIMEOUT_S)
                return value
            finally:
                self._done.set()

        self._thread = InThread(run)
        assert self._done.wait(TIMEOUT_S)
        if self.pid is None:
            self._thread.result()  # raises what `work` raised

    def wait_until_it_blocks_another(self) -> None:
        """Return once another connection waits for a lock this transaction holds."""
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            with connection.cursor() as cursor:  # autocommit: a fresh pg_stat_activity each time
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                    [self.pid],
                )
                if cursor.fetchone()[0]:
                    return
            time.sleep(0.01)
        pytest.fail("nothing waited for the held transaction's locks")

    def release(self) -> Any:
        self._release.set()
        return self._thread.result()


@pytest.mark.django_db(transaction=True)
def test_a_delete_waits_for_a_spool_write_under_way_and_deletes_its_rows(make_target):
    _postgresql_only()
    target = make_target()
    spooling = Held(lambda: DatabaseSpool().keep([_batch(target, 3)], max_samples=100))

    deleting = InThread(lambda: services.target_delete(target=target))
    spooling.wait_until_it_blocks_another()

    assert spooling.release() == Kept()
    deleting.result()
    assert not Target.objects.filter(pk=target.pk).exists()
    assert not SpooledWrite.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_spool_write_that_waited_for_a_delete_counts_its_samples_as_target_deleted(
    make_target,
):
    _postgresql_only()
    gone, kept = make_target(), make_target()
    batches = [_batch(gone, 3), _batch(kept, 2)]
    deleting = Held(lambda: services.target_delete(target=gone))

    spooling = InThread(lambda: DatabaseSpool().keep(batches, max_samples=100))
    deleting.wait_until_it_blocks_another()
    deleting.release()

    assert spooling.result() == Kept(target_deleted=3)
    assert list(SpooledWrite.objects.values_list("target_id", "sample_count")) == [(kept.pk, 2)]


@pytest.mark.django_db(transaction=True)
def test_a_delete_waits_for_a_poll_under_way_and_deletes_what_it_stored(make_target):
    _postgresql_only()
    target = make_target()
    outcome = services.PollOutcome(
        samples=[ScrapedSample("vllm.requests_running", (), 1.0)], snapshot={"kind": "vllm"}
    )
    polling = Held(lambda: services.poll_record_success(target=target, ts=T0, outcome=outcome))

    deleting = InThread(lambda: services.target_delete(target=target))
    polling.wait_until_it_blocks_another()

    assert polling.release() > 0
    deleting.result()
    assert not Sample.objects.filter(target_id=target.pk).exists()
    assert not TargetSnapshot.objects.filter(target_id=target.pk).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("client_fixture", ["planner_api", "planner_client"])
def test_a_second_delete_under_way_answers_404(request, client_fixture, make_target):
    _postgresql_only()
    client = request.getfixturevalue(client_fixture)
    target = make_target()
    first = Target.objects.get(pk=target.pk)  # a delete clears its instance's pk
    deleting = Held(lambda: services.target_delete(target=first))

    if client_fixture == "planner_api":
        second = InThread(lambda: client.delete(f"/api/v1/monitoring/targets/{target.pk}/"))
    else:
        second = InThread(
            lambda: client.post(f"/monitoring/targets/{target.pk}/delete/", {"action": "delete"})
        )
    deleting.wait_until_it_blocks_another()
    deleting.release()

    assert second.result().status_code == 404


@pytest.fixture
def deleted_meanwhile(monkeypatch):
    """Another delete takes the target between the view's read and its own delete."""
    real = services.target_delete

    def first_another(*, target: Target):
        Target.objects.filter(pk=target.pk).delete()
        return real(target=target)

    monkeypatch.setattr(services, "target_delete", first_another)


def test_a_delete_of_a_target_deleted_meanwhile_raises_does_not_exist(make_target):
    target = make_target()
    Target.objects.filter(pk=target.pk).delete()

    with pytest.raises(Target.DoesNotExist):
        services.target_delete(target=target)


def test_the_api_answers_404_for_a_target_deleted_meanwhile(
    deleted_meanwhile, make_target, planner_api
):
    target = make_target()
    assert planner_api.delete(f"/api/v1/monitoring/targets/{target.pk}/").status_code == 404


def test_the_page_answers_404_for_a_target_deleted_meanwhile(
    deleted_meanwhile, make_target, planner_client
):
    target = make_target()
    response = planner_client.post(f"/monitoring/targets/{target.pk}/delete/", {"action": "delete"})
    assert response.status_code == 404


@pytest.mark.parametrize("pk", ["0", "99999999999999999999", "abc"])
def test_the_api_answers_404_for_no_such_target(planner_api, pk):
    assert planner_api.delete(f"/api/v1/monitoring/targets/{pk}/").status_code == 404


@pytest.mark.parametrize("pk", ["0", "99999999999999999999"])
def test_the_page_answers_404_for_no_such_target(planner_client, pk):
    response = planner_client.post(f"/monitoring/targets/{pk}/delete/", {"action": "delete"})
    assert response.status_code == 404
