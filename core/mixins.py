"""Class-based view mixins that enforce the roles on pages."""

from django.contrib.auth.mixins import UserPassesTestMixin

from core.roles import is_admin, is_planner


class PlannerRequiredMixin(UserPassesTestMixin):
    """Allow the view to planners and admins; everyone else signed in gets 403."""

    raise_exception = True

    def test_func(self) -> bool:
        return is_planner(self.request.user)  # type: ignore[attr-defined]


class AdminRequiredMixin(UserPassesTestMixin):
    """Allow the view to admins only."""

    raise_exception = True

    def test_func(self) -> bool:
        return is_admin(self.request.user)  # type: ignore[attr-defined]
