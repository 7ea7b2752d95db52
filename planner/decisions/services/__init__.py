"""Every write to a decision record goes through these functions.

Views, the API, admin and other apps (monitoring fills evidence through
`record_evidence_measurement`) call them. Each runs in a transaction, validates with
full_clean(), bumps the record's version and appends a revision; nothing else writes.

- `records`: create, update, accept, reject, supersede, draft a successor;
- `evidence`: measured values on evidence items;
- `errors`: why a write was refused.
"""

from planner.decisions.services.errors import (
    AcceptanceRefused,
    DecisionConflict,
    DecisionError,
    DecisionReadOnly,
    InvalidTransition,
)
from planner.decisions.services.evidence import convert_unit, record_evidence_measurement
from planner.decisions.services.records import (
    EDITABLE_FIELDS,
    EVIDENCE_EDIT_FIELDS,
    NUMBER_ATTEMPTS,
    decision_accept,
    decision_create,
    decision_create_from_plan,
    decision_create_from_pool_plan,
    decision_draft_successor,
    decision_reject,
    decision_supersede,
    decision_update,
)

__all__ = [
    "AcceptanceRefused",
    "DecisionConflict",
    "DecisionError",
    "DecisionReadOnly",
    "EDITABLE_FIELDS",
    "EVIDENCE_EDIT_FIELDS",
    "InvalidTransition",
    "NUMBER_ATTEMPTS",
    "convert_unit",
    "decision_accept",
    "decision_create",
    "decision_create_from_plan",
    "decision_create_from_pool_plan",
    "decision_draft_successor",
    "decision_reject",
    "decision_supersede",
    "decision_update",
    "record_evidence_measurement",
]
