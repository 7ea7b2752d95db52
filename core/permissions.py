"""API permission classes built on the roles."""

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission

from core.roles import is_admin, is_planner


class ReadAnyWritePlanner(BasePermission):
    """Signed-in users read; only planners and admins write."""

    message = "Writing requires the planner or admin role."

    def has_permission(self, request: Any, view: Any) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        return request.method in SAFE_METHODS or is_planner(request.user)


class AdminOnly(BasePermission):
    """Only admins, for reading and writing."""

    message = "This requires the admin role."

    def has_permission(self, request: Any, view: Any) -> bool:
        return bool(request.user and request.user.is_authenticated and is_admin(request.user))
