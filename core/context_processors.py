"""Template context shared by every page."""

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from core.roles import is_admin, is_planner


def roles(request: HttpRequest) -> dict[str, Any]:
    """Expose the signed-in user's roles and the version to templates."""
    user = getattr(request, "user", None)
    return {
        "user_is_planner": bool(user) and is_planner(user),
        "user_is_admin": bool(user) and is_admin(user),
        "serveplan_version": settings.SERVEPLAN_VERSION,
    }
