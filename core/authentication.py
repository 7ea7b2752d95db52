"""API token authentication against hashed tokens (core.ApiToken)."""

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from core.models import ApiToken


class HashedTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`; only the token's SHA-256 is stored."""

    keyword = "Token"

    def authenticate_credentials(self, key: str) -> tuple[Any, ApiToken]:
        token = ApiToken.objects.find_active(key)
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("Invalid or revoked token."))
        token.touch()
        return token.user, token
