"""Every write of the monitoring app, keyword-only and atomic, one module per concept.

- targets: create, change and delete targets; the GPU targets registered from machines.
- url_guard: the check every target and webhook URL passes before it is saved.
- rules: a target's default alert rules and the users' rules.
- allowlist: the addresses pollers and webhooks may reach, the jobs read-only targets read.

Recording a poll lives with the polls (monitoring.polling.record), deleting a deleted target's
series with the series store (monitoring.stores.forget); both are exported here too.
"""

from monitoring.polling.record import (
    LATEST_LABELLED,
    MAX_ERROR_CHARS,
    PollOutcome,
    poll_record_failure,
    poll_record_success,
    schedule_due_targets,
)
from monitoring.services.allowlist import (
    allowed_job_create,
    allowed_job_delete,
    allowlist_entry_create,
    allowlist_entry_delete,
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
from monitoring.stores.forget import deleted_target_forget

__all__ = [
    "LATEST_LABELLED",
    "MAX_ERROR_CHARS",
    "TARGET_FIELDS",
    "GpuRegistration",
    "PollOutcome",
    "alert_rule_create",
    "alert_rule_update",
    "alert_rule_webhook_set",
    "allowed_job_create",
    "allowed_job_delete",
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
