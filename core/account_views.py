"""The signed-in user's own API tokens: create (key shown once), list with last use, revoke."""

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from core.models import ApiToken


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        label=gettext_lazy("Token name"),
        max_length=100,
        help_text=gettext_lazy("What will use it, e.g. “CI export script”."),
    )


def tokens(request: HttpRequest) -> HttpResponse:
    """List the user's tokens and create a new one."""
    new_key = None
    form = TokenCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            token, new_key = ApiToken.issue(user=request.user, name=form.cleaned_data["name"])
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
    return render(request, "core/tokens.html", context)


@require_POST
def revoke_token(request: HttpRequest, pk: int) -> HttpResponse:
    """Revoke one of the user's own tokens."""
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    token.revoke()
    messages.success(request, _("Token “%(name)s” revoked.") % {"name": token.name})
    return redirect("account-tokens")
