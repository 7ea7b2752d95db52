"""Process health records, per-user preferences and API tokens."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone
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


def hash_token_key(key: str) -> str:
    """Return the SHA-256 hex digest under which a token key is stored."""
    return hashlib.sha256(key.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> "ApiTokenQuerySet":
        return self.filter(revoked_at__isnull=True)

    def find_active(self, key: str) -> "ApiToken | None":
        return self.active().select_related("user").filter(key_hash=hash_token_key(key)).first()


class ApiToken(models.Model):
    """A named API token. Only its hash is stored; the key is shown once, when created."""

    # Writing last_used_at on every request would turn reads into writes; once a minute is enough.
    TOUCH_EVERY = timedelta(minutes=1)

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(_("name"), max_length=100)
    key_prefix = models.CharField(_("key starts with"), max_length=8)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "name"],
                condition=models.Q(revoked_at__isnull=True),
                name="core_apitoken_unique_active_name",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…)"

    @classmethod
    def issue(cls, *, user: object, name: str) -> tuple["ApiToken", str]:
        """Create a token for `user` and return it with its key (the only time it is seen)."""
        key = secrets.token_urlsafe(32)
        token = cls(user=user, name=name, key_prefix=key[:8], key_hash=hash_token_key(key))
        token.full_clean()
        token.save()
        return token, key

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    def touch(self) -> None:
        now = timezone.now()
        if self.last_used_at is None or now - self.last_used_at > self.TOUCH_EVERY:
            self.last_used_at = now
            self.save(update_fields=["last_used_at"])


class OpsCounter(models.Model):
    """A cumulative counter of ServePlan's own operation, shared by every process.

    Workers on any machine add to it (core.opsmetrics); /metrics reads it. One row per metric
    name and label set; the value only grows.
    """

    name = models.CharField(max_length=100)
    labels = models.CharField(max_length=300, blank=True, default="")
    value = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["name", "labels"], name="core_opscounter_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name}{{{self.labels}}} {self.value}"
