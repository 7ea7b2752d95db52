"""Per-user rate limit on plan evaluation (evaluate, create, re-run): each costs CPU time."""

from django.conf import settings
from rest_framework.throttling import UserRateThrottle


class PlanEvaluationThrottle(UserRateThrottle):
    """PLAN_EVALUATION_RATE (e.g. "30/min") per signed-in user, shared by every web worker.

    The rate is read from the settings on each request (DRF's own throttles read theirs once
    at import), so it can be changed per environment and in tests.
    """

    scope = "plan-evaluation"

    def get_rate(self) -> str | None:
        return settings.PLAN_EVALUATION_RATE or None
