"""Create the first admin user and print its generated password once."""

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from core.models import UserPreference
from core.roles import ADMIN


class Command(BaseCommand):
    help = "Create the 'admin' user with a random password on first run; do nothing afterwards."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="admin")

    @transaction.atomic
    def handle(self, *args: Any, username: str, **options: Any) -> None:
        users = get_user_model()
        if users.objects.filter(is_superuser=True).exists():
            self.stdout.write("An admin user already exists; no password printed.")
            return
        password = secrets.token_urlsafe(12)
        user = users.objects.create_superuser(username=username, email="", password=password)
        user.groups.add(Group.objects.get(name=ADMIN))
        # A printed password ends up in terminals and logs: the first sign-in must replace it.
        UserPreference.objects.update_or_create(user=user, defaults={"must_change_password": True})
        # Printed once; only the hash is stored.
        self.stdout.write(
            self.style.SUCCESS(
                f"\n  Created admin user '{username}' with password: {password}\n"
                "  (shown once; the first sign-in asks for a new password)\n"
            )
        )
