"""Process health records and per-user preferences."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class WorkerHeartbeat(models.Model):
    """The last time a Celery worker ran the heartbeat task (one row per worker name)."""

    worker = models.CharField(_("worker"), max_length=200, unique=True)
    beat_at = models.DateTimeField(_("last beat"))

    class Meta:
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")

    def __str__(self) -> str:
        return f"{self.worker} @ {self.beat_at.isoformat()}"


class UserPreference(models.Model):
    """Choices a user makes once and expects remembered, such as the interface language."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    language = models.CharField(_("language"), max_length=16, blank=True)

    class Meta:
        verbose_name = _("user preference")
        verbose_name_plural = _("user preferences")

    def __str__(self) -> str:
        return f"{self.user} ({self.language or '-'})"
