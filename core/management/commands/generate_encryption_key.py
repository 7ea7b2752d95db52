"""Print a new Fernet key for FIELD_ENCRYPTION_KEYS."""

from typing import Any

from cryptography.fernet import Fernet
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Print a new key to put first in FIELD_ENCRYPTION_KEYS."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(Fernet.generate_key().decode())
