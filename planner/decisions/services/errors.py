"""Why a write to a decision record was refused: read-only, not ready, not allowed from its status,
or changed by someone else meanwhile.
"""

from django.utils.translation import gettext as _

from planner.decisions.models import DecisionRecord
from planner.decisions.revisions import diff


class DecisionError(Exception):
    """Base of the refusals below; `messages` is what to show the user."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = messages
        super().__init__(" ".join(messages))


class DecisionReadOnly(DecisionError):
    """The record is superseded and can no longer change."""


class AcceptanceRefused(DecisionError):
    """The record cannot be accepted (or would stop being acceptable); `messages` lists why."""


class InvalidTransition(DecisionError):
    """The status change is not allowed from the record's current status."""


class DecisionConflict(DecisionError):
    """Someone saved the record after the caller read it; `changes` says what they changed."""

    def __init__(self, *, decision: DecisionRecord, expected_version: int) -> None:
        self.decision = decision
        self.expected_version = expected_version
        self.current_version = decision.version
        base = decision.revisions.filter(number=expected_version).first()
        current = decision.revisions.filter(number=decision.version).first()
        self.changes = diff(base.snapshot, current.snapshot) if base is not None and current else []
        super().__init__(
            [
                _(
                    "%(label)s changed since you opened it (you had version %(yours)s, it is now "
                    "version %(current)s). Review the changes and save again."
                )
                % {
                    "label": decision.label,
                    "yours": expected_version,
                    "current": decision.version,
                }
            ]
        )
