"""Encrypt stored secrets (target bearer tokens, webhook secrets) at rest.

Keys come from FIELD_ENCRYPTION_KEYS (comma-separated Fernet keys, newest first). Decryption
tries every key, encryption uses the first, so rotating is: put the new key first, run
`manage.py rotate_encryption_keys`, then drop the old key. See docs/production.md.
"""

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretUnreadable(Exception):
    """A stored secret cannot be decrypted with any configured key."""


def _derived_key(secret: str) -> bytes:
    """Derive a Fernet key from SECRET_KEY (local development only)."""
    digest = hashlib.sha256(f"serveplan-field-encryption:{secret}".encode()).digest()
    return base64.urlsafe_b64encode(digest)


@cache
def _fernet() -> MultiFernet:
    keys = [k.strip() for k in settings.FIELD_ENCRYPTION_KEYS if k.strip()]
    if not keys:
        if not settings.FIELD_ENCRYPTION_FALLBACK_TO_SECRET_KEY:
            raise ImproperlyConfigured("FIELD_ENCRYPTION_KEYS must be set to store secrets.")
        keys = [_derived_key(settings.SECRET_KEY).decode()]
    try:
        return MultiFernet([Fernet(k.encode()) for k in keys])
    except ValueError as exc:
        raise ImproperlyConfigured(
            "FIELD_ENCRYPTION_KEYS holds a value that is not a Fernet key "
            "(generate one with `manage.py generate_encryption_key`)."
        ) from exc


def reset_key_cache() -> None:
    """Forget the cached keys (after settings change, e.g. in tests or rotation)."""
    _fernet.cache_clear()


def encrypt(plaintext: str) -> str:
    """Return `plaintext` encrypted with the newest key."""
    return _fernet().encrypt(plaintext.encode()).decode()


def decrypt(ciphertext: str) -> str:
    """Return the plaintext of `ciphertext`, trying every configured key."""
    try:
        return _fernet().decrypt(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable("the stored secret cannot be decrypted with any key") from exc


def rotate(ciphertext: str) -> str:
    """Return `ciphertext` re-encrypted with the newest key."""
    try:
        return _fernet().rotate(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable("the stored secret cannot be decrypted with any key") from exc
