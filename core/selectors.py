"""Reads of the core app: a user's role, a password reset link."""

from typing import Any

from django.contrib.auth.tokens import default_token_generator
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from core.roles import ROLE_GROUPS


def current_role(user: Any) -> str:
    """Return the user's role group name ("" when none)."""
    groups = {group.name for group in user.groups.all()}  # uses a prefetch when there is one
    return next((role for role in reversed(ROLE_GROUPS) if role in groups), "")


def reset_path(user: Any) -> str:
    """Return the path of a one-time password reset link for `user`.

    Django's token generator: the link stops working once the password changes, the user
    signs in, or PASSWORD_RESET_TIMEOUT (3 days by default) has passed.
    """
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": token})
