"""The signed-in user's own API tokens: create (key shown once), list with last use, revoke."""

from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from core import accounts, login_guard
from core.models import ApiToken
from core.roles import is_admin


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        label=gettext_lazy("Token name"),
        max_length=100,
        help_text=gettext_lazy("What will use it, e.g. “CI export script”."),
    )
    expires_in = forms.ChoiceField(
        label=gettext_lazy("Expires"),
        required=False,
        initial="90",
        choices=[
            ("7", gettext_lazy("in 7 days")),
            ("30", gettext_lazy("in 30 days")),
            ("90", gettext_lazy("in 90 days")),
            ("365", gettext_lazy("in a year")),
            ("", gettext_lazy("never")),
        ],
    )

    def valid_for(self) -> timedelta | None:
        """Return how long the new token works (None: until revoked); the choice is in days."""
        days = self.cleaned_data.get("expires_in")
        return timedelta(days=int(days)) if days else None


def tokens(request: HttpRequest) -> HttpResponse:
    """List the user's tokens and create a new one."""
    new_key = None
    form = TokenCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            token, new_key = ApiToken.issue(
                user=request.user, name=form.cleaned_data["name"], valid_for=form.valid_for()
            )
        except ValidationError:
            form.add_error("name", _("You already have an active token with this name."))
        else:
            messages.success(request, _("Token “%(name)s” created.") % {"name": token.name})
            form = TokenCreateForm()
    context: dict[str, Any] = {
        "form": form,
        "new_key": new_key,
        "tokens": ApiToken.objects.filter(user=request.user),
    }
    response = render(request, "core/tokens.html", context)
    if new_key:
        # The page shows a new key: no cache (or the back button) may keep a copy.
        response["Cache-Control"] = "no-store"
    return response


@require_POST
def revoke_token(request: HttpRequest, pk: int) -> HttpResponse:
    """Revoke one of the user's own tokens; admins may revoke anyone's."""
    owned = ApiToken.objects.all() if is_admin(request.user) else request.user.api_tokens.all()
    token = get_object_or_404(owned, pk=pk)
    token.revoke()
    messages.success(request, _("Token “%(name)s” revoked.") % {"name": token.name})
    if token.user_id != request.user.pk:
        return redirect("user-detail", pk=token.user_id)
    return redirect("account-tokens")


class GuardedLoginView(auth_views.LoginView):
    """Django's login, refused with the lockout page while the address sprays (login_guard)."""

    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if login_guard.is_blocked(request):
            return render(request, settings.AXES_LOCKOUT_TEMPLATE, status=429)
        return super().post(request, *args, **kwargs)


class PasswordChangeView(auth_views.PasswordChangeView):
    """Change one's own password; API tokens are revoked (core.accounts) and said so."""

    template_name = "registration/password_change_form.html"
    success_url = reverse_lazy("home")

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        self.request.session.pop(accounts.SESSION_MUST_CHANGE_KEY, None)
        messages.success(
            self.request,
            _("Password changed. Your API tokens were revoked: create new ones if you need them."),
        )
        return response


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Set a new password from a reset link an admin issued (core.user_views)."""

    template_name = "registration/password_reset_confirm.html"
    success_url = reverse_lazy("password_reset_complete")
