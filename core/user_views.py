"""User management for admins: create users, set roles, disable, issue reset links, see and
revoke anyone's API tokens. Every change goes through core.services and is audited."""

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from core import selectors, services
from core.models import ApiToken
from core.roles import ADMIN, PLANNER, VIEWER, is_admin

ROLE_CHOICES = [
    (VIEWER, gettext_lazy("viewer: reads everything")),
    (PLANNER, gettext_lazy("planner: plans, decisions, inventory and monitoring")),
    (ADMIN, gettext_lazy("admin: everything, including users and the audit log")),
]


ROLE_NAMES = {
    VIEWER: gettext_lazy("viewer"),
    PLANNER: gettext_lazy("planner"),
    ADMIN: gettext_lazy("admin"),
}


class UserCreateForm(forms.Form):
    username = forms.CharField(label=gettext_lazy("User name"), max_length=150)
    email = forms.EmailField(label=gettext_lazy("E-mail (optional)"), required=False)
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=ROLE_CHOICES, initial=VIEWER)


class UserChangeForm(forms.Form):
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=ROLE_CHOICES)
    is_active = forms.BooleanField(label=gettext_lazy("May sign in"), required=False)


def _forbidden() -> HttpResponse:
    return HttpResponse(_("User management is for admins."), status=403)


def _no_store(response: HttpResponse) -> HttpResponse:
    # The page shows a secret (a reset link): keep it out of every cache and the history.
    response["Cache-Control"] = "no-store"
    return response


def user_list(request: HttpRequest) -> HttpResponse:
    """List users with role and active tokens; create a user (who gets a reset link)."""
    if not is_admin(request.user):
        return _forbidden()
    form = UserCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            user = services.create_user(
                username=data["username"],
                email=data["email"],
                role=data["role"],
                actor=request.user,
            )
        except ValidationError as exc:
            for message in exc.message_dict.get("username", exc.messages):
                form.add_error("username", message)
        else:
            messages.success(request, _("User “%(name)s” created.") % {"name": user.username})
            return _reset_link_page(request, user)
    active_tokens = Count("api_tokens", filter=Q(api_tokens__revoked_at__isnull=True))
    rows = (
        get_user_model()
        .objects.annotate(active_tokens=active_tokens)
        .prefetch_related("groups")
        .order_by("username")
    )
    people = [(user, ROLE_NAMES.get(selectors.current_role(user), "—")) for user in rows]
    status = 400 if form.errors else 200
    return render(request, "core/users.html", {"form": form, "people": people}, status=status)


def user_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Change a user's role or sign-in; list and revoke their API tokens."""
    if not is_admin(request.user):
        return _forbidden()
    person = get_object_or_404(get_user_model(), pk=pk)
    initial = {"role": selectors.current_role(person), "is_active": person.is_active}
    form = UserChangeForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if person.pk == request.user.pk and (data["role"] != ADMIN or not data["is_active"]):
            form.add_error(None, _("You cannot remove your own admin role or sign-in."))
        else:
            try:
                _apply_user_change(request, person, data, initial)
            except ValidationError as exc:
                for message in exc.messages:
                    form.add_error(None, message)
            else:
                messages.success(request, _("Saved."))
                return redirect("user-detail", pk=person.pk)
    context: dict[str, Any] = {
        "person": person,
        "form": form,
        "tokens": ApiToken.objects.filter(user=person),
    }
    return render(request, "core/user_detail.html", context, status=400 if form.errors else 200)


@transaction.atomic
def _apply_user_change(
    request: HttpRequest, person: Any, data: dict[str, Any], initial: dict[str, Any]
) -> None:
    """Apply the role and sign-in changes together: a refused one undoes the other."""
    if data["role"] != initial["role"] or person.is_superuser and data["role"] != ADMIN:
        services.set_role(user=person, role=data["role"], actor=request.user)
    if data["is_active"] != person.is_active:
        services.set_active(user=person, active=data["is_active"], actor=request.user)


def _reset_link_page(request: HttpRequest, person: Any) -> HttpResponse:
    link = request.build_absolute_uri(selectors.reset_path(person))
    context = {"person": person, "reset_link": link}
    return _no_store(render(request, "core/reset_link.html", context))


@require_POST
def reset_link(request: HttpRequest, pk: int) -> HttpResponse:
    """Issue a one-time password reset link to hand to the user (no mail needed)."""
    if not is_admin(request.user):
        return _forbidden()
    return _reset_link_page(request, get_object_or_404(get_user_model(), pk=pk))
