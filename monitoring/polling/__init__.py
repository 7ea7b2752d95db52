"""Polling: the poll of a target, the slots suspect targets share, and what a poll records.

- run: one poll of a target (scrape, record, evaluate its alerts), or its read from Prometheus.
- pool: the few worker slots suspect targets share, so healthy ones always find one.
- record: storing a poll's outcome on the target and in the series store; the due targets.

When each target is due (its grid of slots, the backoff after expensive failures, the polls
missed) is monitoring.pacing, pure and one floor down: the Target model reads it too. The tasks
(monitoring.tasks) schedule and run the polls; nothing here imports them.
"""
