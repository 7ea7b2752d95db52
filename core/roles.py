"""The three roles: viewer reads, planner plans and edits inventory, admin does everything."""

from typing import Any

VIEWER = "viewer"
PLANNER = "planner"
ADMIN = "admin"
ROLE_GROUPS = (VIEWER, PLANNER, ADMIN)

# Apps whose models planners may add, change and delete; viewers only see them.
PLANNER_APPS = ("inventory", "planner", "monitoring")


def user_groups(user: Any) -> set[str]:
    """Return the role group names of `user`, cached on the user object for the request."""
    if not getattr(user, "is_authenticated", False):
        return set()
    cached = getattr(user, "_serveplan_groups", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        user._serveplan_groups = cached
    return cached


def is_admin(user: Any) -> bool:
    """Return whether `user` may do everything: the admin role decides.

    A superuser flag counts only on an account without any role (one made by Django's
    createsuperuser); a user given another role is not an admin, whatever flags it kept.
    """
    groups = user_groups(user)
    if ADMIN in groups:
        return True
    return bool(getattr(user, "is_superuser", False)) and not groups & set(ROLE_GROUPS)


def is_planner(user: Any) -> bool:
    """Return whether `user` may create plans and decisions and edit the inventory."""
    return is_admin(user) or PLANNER in user_groups(user)


def sync_group_permissions(sender: Any = None, **kwargs: Any) -> None:
    """Give each role group the model permissions it needs (run after migrations)."""
    from django.contrib.auth.models import Group, Permission

    planner_apps = Permission.objects.filter(content_type__app_label__in=PLANNER_APPS)
    groups = {g.name: g for g in Group.objects.filter(name__in=ROLE_GROUPS)}
    if VIEWER in groups:
        groups[VIEWER].permissions.set(planner_apps.filter(codename__startswith="view_"))
    if PLANNER in groups:
        groups[PLANNER].permissions.set(planner_apps)
    if ADMIN in groups:
        groups[ADMIN].permissions.set(Permission.objects.all())
