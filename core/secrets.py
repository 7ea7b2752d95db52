"""A model field that stores a secret encrypted at rest (core.crypto)."""

from typing import Any

from django.apps import apps
from django.db import models

from core import crypto


class EncryptedTextField(models.TextField):
    """Keep ciphertext in the database and plaintext on the instance.

    Empty strings stay empty (no secret set). Reading a value that no configured key can
    decrypt raises crypto.SecretUnreadable rather than handing out ciphertext.
    """

    def from_db_value(self, value: str | None, expression: Any, connection: Any) -> str | None:
        if not value:
            return value
        return crypto.decrypt(value)

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if not value:
            return value
        return crypto.encrypt(value)


def encrypted_fields() -> list[tuple[type[models.Model], str]]:
    """Return every (model, field name) that stores an encrypted secret."""
    found = []
    for model in apps.get_models():
        for field in model._meta.get_fields():
            if isinstance(field, EncryptedTextField):
                found.append((model, field.name))
    return found
