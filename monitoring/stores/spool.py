"""The remote-write spool in the database (monitoring.series.buffer.Spool): batches the
time-series server did not take yet, shared by every worker and kept across their restarts.

Replays are serialised: on PostgreSQL one worker at a time holds an advisory lock while it sends
the oldest rows; another that finds it taken spools its own samples behind them and goes on
(no worker waits for another's send), so samples of one series always reach the server in time
order. Prometheus refuses an out-of-order sample.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Sum

from monitoring.models import SpooledWrite, Target
from monitoring.series import TargetRef, WriteBatch, WriteSample
from monitoring.series import remote_write as rw
from monitoring.series.buffer import Kept, Outcome, Send, Sent, request_size, send_once

# pg_try_advisory_xact_lock's key for "a worker is sending the spool" (any constant of our own).
REPLAY_LOCK_KEY = 0x5E12E_5900
# Rows one replay claims at most (each is one poll; the sample cap usually stops it first).
MAX_ROWS_PER_REPLAY = 200


def _encoded(batch: WriteBatch) -> str:
    return json.dumps([[s.key, [list(pair) for pair in s.labels], s.value] for s in batch.samples])


def _decoded(row: SpooledWrite) -> WriteBatch:
    samples = tuple(
        WriteSample(key, tuple((name, text) for name, text in labels), float(value))
        for key, labels, value in json.loads(row.samples)
    )
    target = row.target
    ref = (
        rw.FLEET
        if target is None
        else TargetRef(
            id=target.pk, name=target.name, kind=target.kind, interval_s=target.poll_interval_s
        )
    )
    return WriteBatch(target=ref, ts=row.polled_at, samples=samples)


def _target_id(batch: WriteBatch) -> int | None:
    return None if batch.target.id == rw.FLEET.id else batch.target.id


@dataclass(frozen=True, slots=True)
class Live:
    batches: list[WriteBatch]  # those whose target still exists (the fleet's always does)
    target_deleted: int  # the samples of the others: a target deleted meanwhile


def live_batches(batches: Sequence[WriteBatch], *, key_share: bool = False) -> Live:
    """Split off the batches of targets deleted meanwhile: they have nowhere to go.

    With `key_share`, for a transaction about to insert rows that refer to the live targets:
    their rows stay locked FOR KEY SHARE until it ends (PostgreSQL). A delete locks the target
    FOR UPDATE first (monitoring.services.target_delete), so it either waits for these rows to
    commit and deletes them with the target, or went first, and its target is not live here:
    neither transaction fails at commit on the foreign key. Polls only update the target row
    (FOR NO KEY UPDATE), which this lock does not block."""
    wanted = {b.target.id for b in batches} - {rw.FLEET.id}
    live = {rw.FLEET.id}
    if wanted:
        live.update(_existing(wanted, key_share=key_share))
    kept = [b for b in batches if b.target.id in live]
    return Live(kept, sum(map(len, batches)) - sum(map(len, kept)))


def _existing(ids: set[int], *, key_share: bool) -> list[int]:
    if not key_share or connection.vendor != "postgresql":
        # SQLite's transactions are IMMEDIATE (config.settings): one holds the database's one
        # write lock from its start, so no delete commits between this read and its inserts.
        return list(Target.objects.filter(pk__in=ids).values_list("pk", flat=True))
    table = connection.ops.quote_name(Target._meta.db_table)
    pk = connection.ops.quote_name(Target._meta.pk.column)
    with connection.cursor() as cursor:
        # KEY SHARE locks share: spool writes never wait on each other, only on a delete.
        cursor.execute(
            f"SELECT {pk} FROM {table} WHERE {pk} = ANY(%s) ORDER BY {pk} FOR KEY SHARE",
            [sorted(ids)],
        )
        return [row[0] for row in cursor.fetchall()]


def _oldest_first():
    return SpooledWrite.objects.order_by("polled_at", "id")


class DatabaseSpool:
    def keep(self, batches: Sequence[WriteBatch], *, max_samples: int) -> Kept:
        with transaction.atomic():
            live = live_batches([b for b in batches if len(b)], key_share=True)
            SpooledWrite.objects.bulk_create(
                SpooledWrite(
                    target_id=_target_id(b),
                    polled_at=b.ts,
                    sample_count=len(b),
                    samples=_encoded(b),
                )
                for b in live.batches
            )
            return Kept(dropped=self._trim(max_samples), target_deleted=live.target_deleted)

    def _trim(self, max_samples: int) -> int:
        """Delete the oldest rows beyond `max_samples` in all; return the samples deleted."""
        excess = self.pending() - max_samples
        if excess <= 0:
            return 0
        doomed, dropped = [], 0
        for pk, count in _oldest_first().values_list("pk", "sample_count").iterator():
            if dropped >= excess:
                break
            doomed.append(pk)
            dropped += count
        SpooledWrite.objects.filter(pk__in=doomed).delete()
        return dropped

    def replay(self, send: Send, *, max_samples: int) -> Sent | None:
        if connection.vendor != "postgresql":
            # SQLite would hold its one write lock, the whole database's, for the send: no
            # transaction (two workers on SQLite may send a row twice; servers keep one copy).
            return self._replay_oldest(send, max_samples)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [REPLAY_LOCK_KEY])
                if not cursor.fetchone()[0]:
                    return Sent(0, Outcome.BUSY)
            return self._replay_oldest(send, max_samples)

    def _replay_oldest(self, send: Send, max_samples: int) -> Sent | None:
        claimed = list(_oldest_first().select_related("target")[:MAX_ROWS_PER_REPLAY])
        rows = claimed[: request_size((r.sample_count for r in claimed), max_samples)]
        if not rows:
            return None
        sent = send_once(send, [_decoded(row) for row in rows])
        if sent.outcome is not Outcome.RETRY:  # written, or refused for good: done with them
            SpooledWrite.objects.filter(pk__in=[row.pk for row in rows]).delete()
        return sent

    def pending(self) -> int:
        return SpooledWrite.objects.aggregate(n=Sum("sample_count"))["n"] or 0
