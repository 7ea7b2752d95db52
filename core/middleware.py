"""Require a signed-in user for every page."""

from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.http import HttpRequest
from django.utils import translation


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


SESSION_LANGUAGE_KEY = "serveplan_language"


class UserLanguageMiddleware:
    """Use the signed-in user's saved language over the cookie and Accept-Language.

    The saved choice is copied into the session at login (core.apps) and on every switch
    (core.views.set_language), so no request pays a query for it. LocaleMiddleware's choice
    (cookie, then Accept-Language) stays for anonymous visitors and users who never picked one.
    """

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        language = (
            request.session.get(SESSION_LANGUAGE_KEY) if hasattr(request, "session") else None
        )
        if language and language != getattr(request, "LANGUAGE_CODE", None):
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)


def saved_language(user: Any) -> str:
    """Return the user's saved interface language, or "" when none is saved."""
    from core.models import UserPreference

    language = (
        UserPreference.objects.filter(user=user).values_list("language", flat=True).first() or ""
    )
    return language if translation.check_for_language(language) else ""


def remember_language_at_login(sender: Any, request: HttpRequest, user: Any, **kwargs: Any) -> None:
    """Copy the user's saved language into the new session."""
    language = saved_language(user)
    if language and hasattr(request, "session"):
        request.session[SESSION_LANGUAGE_KEY] = language
