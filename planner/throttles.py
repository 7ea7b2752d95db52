"""Per-user rate limit on plan evaluation (API evaluate, create, re-run; the what-if and
re-run pages): each costs CPU time."""

import math
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from rest_framework.throttling import UserRateThrottle


class PlanEvaluationThrottle(UserRateThrottle):
    """PLAN_EVALUATION_RATE (e.g. "30/min") per signed-in user, shared by every web worker.

    The rate is read from the settings on each request (DRF's own throttles read theirs once
    at import), so it can be changed per environment and in tests.
    """

    scope = "plan-evaluation"

    def get_rate(self) -> str | None:
        return settings.PLAN_EVALUATION_RATE or None


def evaluation_throttled(view_method: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Decorate a page view's method that evaluates plans with the same per-user limit."""

    @wraps(view_method)
    def wrapper(self: Any, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        throttle = PlanEvaluationThrottle()
        if throttle.allow_request(request, self):
            return view_method(self, request, *args, **kwargs)
        wait_s = math.ceil(throttle.wait() or 1)
        message = _("Too many plan evaluations: try again in %(seconds)s s.") % {"seconds": wait_s}
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(wait_s)
        return response

    return wrapper
