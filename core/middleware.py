"""Require a signed-in user for every page."""

from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpRequest


class PagesRequireLoginMiddleware(LoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware, except for the API.

    The API authenticates inside DRF (session or token) and answers 401/403 instead of
    redirecting a script to a login page; DRF's default permission requires a signed-in user.
    """

    def process_view(
        self, request: HttpRequest, view_func: Any, view_args: Any, view_kwargs: Any
    ) -> Any:
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
