"""Deleting a deleted target's series on the time-series server (again, after a late write)."""

from __future__ import annotations

import logging

from monitoring import stores
from monitoring.models import Target
from monitoring.series import ForgetReport, Forgotten, TargetRef

logger = logging.getLogger(__name__)


def deleted_target_forget(*, ref: TargetRef) -> ForgetReport | None:
    """Delete a deleted target's series on the time-series server again (None: the target
    exists, its series are never deleted)."""
    if Target.objects.filter(pk=ref.id).exists():
        return None
    return forget_series(ref)


def forget_series(ref: TargetRef) -> ForgetReport:
    report = stores.current().forget(ref)
    if report.outcome is Forgotten.KEPT:
        logger.warning(
            "target %s deleted, its series %s kept by the server: %s",
            ref.name,
            report.selector,
            report.reason,
        )
    return report
