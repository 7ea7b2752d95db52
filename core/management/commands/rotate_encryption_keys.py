"""Re-encrypt every stored secret with the newest FIELD_ENCRYPTION_KEYS key."""

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from core.secrets import encrypted_fields


class Command(BaseCommand):
    help = (
        "Re-encrypt stored secrets with the first key of FIELD_ENCRYPTION_KEYS. Run after putting "
        "a new key first; drop the old key only after this succeeded."
    )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        total = 0
        for model, field in encrypted_fields():
            rotated = 0
            for obj in model._default_manager.exclude(**{field: ""}).select_for_update():
                # Loading decrypted with any key; saving encrypts with the newest one.
                obj.save(update_fields=[field])
                rotated += 1
            self.stdout.write(f"{model._meta.label}.{field}: {rotated} re-encrypted")
            total += rotated
        self.stdout.write(self.style.SUCCESS(f"Done: {total} secret(s) re-encrypted."))
