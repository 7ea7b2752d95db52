"""Every write of the monitoring app, keyword-only and atomic, one module per concept.

- targets: create, change and delete targets; the GPU targets registered from machines.
- url_guard: the check every target and webhook URL passes before it is saved.
- forget: deleting a deleted target's series on the time-series server.
- rules: a target's default alert rules and the users' rules.
- allowlist: the addresses pollers and webhooks may reach.
- polls: recording a poll's outcome and scheduling the polls that are due.
"""

from monitoring.services.allowlist import allowlist_entry_create, allowlist_entry_delete
from monitoring.services.forget import deleted_target_forget
from monitoring.services.polls import (
    LATEST_LABELLED,
    MAX_ERROR_CHARS,
    PollOutcome,
    poll_record_failure,
    poll_record_success,
    schedule_due_targets,
)
from monitoring.services.rules import (
    alert_rule_create,
    alert_rule_update,
    alert_rule_webhook_set,
    decision_ttft_threshold_s,
    default_rule_specs,
    default_rules_create,
    ttft_rule_sync,
)
from monitoring.services.targets import (
    TARGET_FIELDS,
    GpuRegistration,
    gpu_target_name,
    gpu_targets_register,
    target_create,
    target_delete,
    target_update,
)
from monitoring.services.url_guard import validate_monitored_url

__all__ = [
    "LATEST_LABELLED",
    "MAX_ERROR_CHARS",
    "TARGET_FIELDS",
    "GpuRegistration",
    "PollOutcome",
    "alert_rule_create",
    "alert_rule_update",
    "alert_rule_webhook_set",
    "allowlist_entry_create",
    "allowlist_entry_delete",
    "decision_ttft_threshold_s",
    "default_rule_specs",
    "default_rules_create",
    "deleted_target_forget",
    "gpu_target_name",
    "gpu_targets_register",
    "poll_record_failure",
    "poll_record_success",
    "schedule_due_targets",
    "target_create",
    "target_delete",
    "target_update",
    "ttft_rule_sync",
    "validate_monitored_url",
]
