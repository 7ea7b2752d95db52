"""Process health records, per-user preferences and API tokens."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history import register
from simple_history.models import HistoricalRecords


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
    """Per-user settings: the interface language, and whether the password must change."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    language = models.CharField(_("language"), max_length=16, blank=True)
    # Set for a generated password (the first admin): every page leads to the password change
    # until the user has chosen one (core.accounts).
    must_change_password = models.BooleanField(_("must change password"), default=False)

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
        """Tokens neither revoked nor expired."""
        unexpired = models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=timezone.now())
        return self.filter(unexpired, revoked_at__isnull=True)

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
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()
    # Issue and revocation are audited; the hash stays out, and use (touch) makes no row.
    history = HistoricalRecords(excluded_fields=["key_hash", "last_used_at"])

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
    def issue(
        cls, *, user: object, name: str, valid_for: timedelta | None = None
    ) -> tuple["ApiToken", str]:
        """Create a token for `user` and return it with its key (the only time it is seen).

        With `valid_for`, the token stops working that long after now.
        """
        # An expired token keeps its name taken (unique among unrevoked ones): retire it.
        expired = cls.objects.filter(user=user, name=name, revoked_at__isnull=True)
        expired.filter(expires_at__lte=timezone.now()).update(revoked_at=models.F("expires_at"))
        key = secrets.token_urlsafe(32)
        token = cls(user=user, name=name, key_prefix=key[:8], key_hash=hash_token_key(key))
        if valid_for is not None:
            token.expires_at = token.created_at + valid_for
        token.full_clean()
        token.save()
        return token, key

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and not self.is_expired

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])

    def touch(self) -> None:
        now = timezone.now()
        if self.last_used_at is None or now - self.last_used_at > self.TOUCH_EVERY:
            self.last_used_at = now
            ApiToken.objects.filter(pk=self.pk).update(last_used_at=now)


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


# Users and their role changes are audited (core.services records the role in the change reason).
# Password hashes stay out of the history table; sign-ins make no row (core.apps).
register(
    get_user_model(),
    app="core",
    excluded_fields=["password", "last_login"],
    m2m_fields=[],
)
