"""User management: roles and activation. Each change is audited (reads: core.selectors).

The user's history row (simple_history, registered in core.models) carries who made the
change; role changes also state the old and the new role in its change reason.
"""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from core.roles import ROLE_GROUPS
from core.selectors import current_role


def save_audited(user: Any, *, actor: Any, reason: str = "", fields: list[str] | None = None):
    """Save `user` with `actor` and `reason` on its audit row."""
    user._history_user = actor if getattr(actor, "is_authenticated", False) else None
    user._change_reason = reason
    user.save(update_fields=fields)


@transaction.atomic
def set_role(*, user: Any, role: str, actor: Any) -> None:
    """Give `user` exactly one role group; the audit row says from which role to which."""
    if role not in ROLE_GROUPS:
        raise ValueError(f"unknown role {role!r}")
    old = current_role(user)
    user.groups.remove(*Group.objects.filter(name__in=ROLE_GROUPS))
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    user.__dict__.pop("_serveplan_groups", None)  # core.roles caches groups per request
    save_audited(user, actor=actor, reason=f"role: {old or '-'} → {role}")


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


def set_active(*, user: Any, active: bool, actor: Any) -> None:
    """Enable or disable sign-in; disabling also revokes the user's API tokens."""
    from core.models import ApiToken

    user.is_active = active
    save_audited(user, actor=actor, reason="enabled" if active else "disabled")
    if not active:
        for token in ApiToken.objects.active().filter(user=user):
            token.revoke()
