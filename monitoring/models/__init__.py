"""Monitoring's tables, one module per concept (the app label stays `monitoring`):

- targets: targets, their poll state and last snapshot, the allowlist and the selector
  policy (the Prometheus jobs read-only targets may read);
- series: the embedded series store's tables (samples, rollups, fleet sums, spool, cursor),
  read and written only by monitoring.stores;
- alerts: alert rules, their state and events.
"""

from monitoring.models.alerts import AlertEvent, AlertRule, AlertState, Comparison
from monitoring.models.series import FleetSum, Rollup, RollupCursor, Sample, SpooledWrite
from monitoring.models.targets import (
    DEFAULT_POLL_INTERVAL_S,
    MAX_POLL_INTERVAL_S,
    MAX_SAMPLE_LIMIT,
    MIN_POLL_INTERVAL_S,
    TARGET_POLL_STATE_FIELDS,
    TARGET_UNAUDITED_FIELDS,
    AllowedJob,
    AllowlistEntry,
    PlanScope,
    PollStatus,
    Target,
    TargetKind,
    TargetSnapshot,
    job_refusal,
    selector_refusal,
)

__all__ = [
    "DEFAULT_POLL_INTERVAL_S",
    "MAX_POLL_INTERVAL_S",
    "MAX_SAMPLE_LIMIT",
    "MIN_POLL_INTERVAL_S",
    "TARGET_POLL_STATE_FIELDS",
    "TARGET_UNAUDITED_FIELDS",
    "AlertEvent",
    "AlertRule",
    "AlertState",
    "AllowedJob",
    "AllowlistEntry",
    "Comparison",
    "FleetSum",
    "PlanScope",
    "PollStatus",
    "Rollup",
    "RollupCursor",
    "Sample",
    "SpooledWrite",
    "Target",
    "TargetKind",
    "TargetSnapshot",
    "job_refusal",
    "selector_refusal",
]
