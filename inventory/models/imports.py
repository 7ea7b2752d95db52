"""Server-side storage of a parsed machine import between preview and confirmation."""

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class ImportFormat(models.TextChoices):
    CSV = "csv", "CSV"
    YAML = "yaml", "YAML"


class MachineImportBatch(models.Model):
    """An uploaded machine list, parsed and kept until confirmed (never re-uploaded)."""

    token = models.UUIDField(_("token"), default=uuid.uuid4, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("uploaded by"),
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
    )
    created_at = models.DateTimeField(_("uploaded"), auto_now_add=True)
    filename = models.CharField(_("file name"), max_length=255, blank=True)
    file_format = models.CharField(_("format"), max_length=10, choices=ImportFormat)
    update_existing = models.BooleanField(_("update existing machines"), default=False)
    rows = models.JSONField(_("parsed rows"), default=list)
    applied_at = models.DateTimeField(_("applied"), null=True, blank=True)
    applied_count = models.PositiveIntegerField(_("machines written"), default=0)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("machine import")
        verbose_name_plural = _("machine imports")

    def __str__(self) -> str:
        return f"{self.filename or self.file_format} ({self.created_at:%Y-%m-%d %H:%M})"
