"""User management: roles and activation. Each change is audited (reads: core.selectors).

The user's history row (simple_history, registered in core.models) carries who made the
change; role changes also state the old and the new role in its change reason.
"""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from core.roles import ADMIN, ROLE_GROUPS, is_admin
from core.selectors import current_role


def save_audited(user: Any, *, actor: Any, reason: str = "", fields: list[str] | None = None):
    """Save `user` with `actor` and `reason` on its audit row."""
    user._history_user = actor if getattr(actor, "is_authenticated", False) else None
    user._change_reason = reason
    user.save(update_fields=fields)


def _refuse_losing_the_last_admin(user: Any) -> None:
    """Raise ValidationError when `user` is the only active admin left."""
    if not is_admin(user):
        return
    # The other admins' rows are locked, so two admins demoting each other cannot both succeed.
    others = (
        get_user_model()
        .objects.select_for_update(of=("self",))
        .filter(is_active=True)
        .filter(Q(groups__name=ADMIN) | Q(is_superuser=True, groups__isnull=True))
        .exclude(pk=user.pk)
        .values_list("pk", flat=True)
    )
    if not list(others[:1]):
        raise ValidationError(
            _("%(name)s is the last active admin: make another user admin first.")
            % {"name": user.get_username()},
            code="last_admin",
        )


@transaction.atomic
def set_role(*, user: Any, role: str, actor: Any) -> None:
    """Give `user` exactly one role group, and the flags that go with it; audited.

    The role is the whole truth: an admin is staff (the Django admin site), anyone else is
    neither staff nor superuser (the admin group holds every permission, so no admin needs the
    superuser flag). Demoting the last active admin is refused with a ValidationError.
    """
    if role not in ROLE_GROUPS:
        raise ValueError(f"unknown role {role!r}")
    if role != ADMIN:
        _refuse_losing_the_last_admin(user)
    old = current_role(user) or ("admin (superuser)" if user.is_superuser else "")
    user.groups.remove(*Group.objects.filter(name__in=ROLE_GROUPS))
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    user.__dict__.pop("_serveplan_groups", None)  # core.roles caches groups per request
    user.is_staff = role == ADMIN
    if role != ADMIN:
        user.is_superuser = False
    reason = f"role: {old or '-'} → {role}"
    save_audited(user, actor=actor, reason=reason, fields=["is_staff", "is_superuser"])


@transaction.atomic
def create_user(*, username: str, role: str, actor: Any, email: str = "") -> Any:
    """Create a user without a usable password (they set one through a reset link)."""
    user = get_user_model()(username=username, email=email)
    user.set_unusable_password()
    user.full_clean()
    user._history_user = actor
    user.save()
    set_role(user=user, role=role, actor=actor)
    return user


@transaction.atomic
def set_active(*, user: Any, active: bool, actor: Any) -> None:
    """Enable or disable sign-in; disabling also revokes the user's API tokens.

    Disabling the last active admin is refused with a ValidationError.
    """
    from core.models import ApiToken

    if not active:
        _refuse_losing_the_last_admin(user)
    user.is_active = active
    save_audited(user, actor=actor, reason="enabled" if active else "disabled")
    if not active:
        for token in ApiToken.objects.active().filter(user=user):
            token.revoke()
