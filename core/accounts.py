"""Account safety around sign-in and passwords.

- Sign-in time is stored without a save(): users are audited, and a history row per sign-in
  would drown the real changes.
- A user flagged `must_change_password` (the generated first admin) is sent to the password
  change page until they have picked their own password.
- Changing a password revokes the user's API tokens: a leaked password must not leave a
  working token behind.
"""

from typing import Any

from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone

SESSION_MUST_CHANGE_KEY = "serveplan_must_change_password"
# Paths a user who must change the password can still reach.
_ALLOWED_PREFIXES = ("/accounts/password/", "/accounts/logout/", "/static/", "/i18n/")


def record_last_login(sender: Any, user: Any, **kwargs: Any) -> None:
    """user_logged_in receiver: store the sign-in time (a queryset update, no audit row)."""
    user.last_login = timezone.now()
    type(user).objects.filter(pk=user.pk).update(last_login=user.last_login)


def flag_password_change_at_login(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """user_logged_in receiver: remember in the session that the password must change."""
    from core.models import UserPreference

    must = UserPreference.objects.filter(user=user, must_change_password=True).exists()
    if must and hasattr(request, "session"):
        request.session[SESSION_MUST_CHANGE_KEY] = True


def password_changed(user: Any) -> None:
    """Revoke the user's API tokens and clear the must-change flag after a new password."""
    from core.models import ApiToken, UserPreference

    for token in ApiToken.objects.active().filter(user=user):
        token.revoke()
    UserPreference.objects.filter(user=user).update(must_change_password=False)


def revoke_tokens_on_password_save(sender: Any, instance: Any, created: bool, **kw: Any) -> None:
    """post_save receiver for the user model.

    AbstractBaseUser.set_password() keeps the new raw password in `_password` until save()
    has run (Django hands it to the password validators' password_changed hooks), so its
    presence here means this save stored a new password, whichever path set it.
    """
    if not created and getattr(instance, "_password", None) is not None:
        password_changed(instance)


class PasswordChangeRequiredMiddleware:
    """Send a user who must change the password to the password change page."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        session = getattr(request, "session", None)
        if (
            session is not None
            and session.get(SESSION_MUST_CHANGE_KEY)
            and not request.path_info.startswith(_ALLOWED_PREFIXES)
        ):
            return HttpResponseRedirect(reverse("password_change"))
        return self.get_response(request)
