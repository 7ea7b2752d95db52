"""The allowlists (admins only): the addresses pollers and webhooks may reach, and the
Prometheus jobs read-only targets may read (the selector policy)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from monitoring.models import AllowedJob, AllowlistEntry
from monitoring.targets.reach import validate_entry


def allowlist_entry_create(*, name: str, note: str = "") -> AllowlistEntry:
    """Let pollers and webhooks reach `name` (an address, network, host name or .suffix)."""
    try:
        normalised = validate_entry(name)
    except ValidationError as exc:
        raise ValidationError({"name": exc.messages}) from None
    entry = AllowlistEntry(name=normalised, note=note.strip())
    with transaction.atomic():
        entry.full_clean()
        entry.save()
    return entry


def allowlist_entry_delete(*, entry: AllowlistEntry) -> None:
    """Remove an entry; targets that needed it fail their next poll as forbidden_address."""
    with transaction.atomic():
        entry.delete()


def allowed_job_create(*, name: str, note: str = "") -> AllowedJob:
    """Let read-only targets read the series of the Prometheus job `name`."""
    job = AllowedJob(name=name.strip(), note=note.strip())
    with transaction.atomic():
        job.full_clean()
        job.save()
    return job


def allowed_job_delete(*, job: AllowedJob) -> None:
    """Withdraw a job: its read-only targets fail their next read as forbidden_selector."""
    with transaction.atomic():
        job.delete()
