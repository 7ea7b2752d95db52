"""Per-user rate limit on plan evaluation: every path that runs the engine (API evaluate,
create, re-run; the what-if, re-run, wizard and calibration re-plan pages) shares one budget,
since each evaluation costs CPU time."""

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


def evaluation_wait_s(request: HttpRequest, view: Any = None) -> int | None:
    """Count one evaluation for the request's user; return None if allowed, else seconds to wait.

    Call it once per evaluation, just before evaluating: an allowed call uses up one unit.
    """
    throttle = PlanEvaluationThrottle()
    if throttle.allow_request(request, view):
        return None
    return math.ceil(throttle.wait() or 1)


def too_many_evaluations_message(wait_s: int) -> str:
    return _("Too many plan evaluations: try again in %(seconds)s s.") % {"seconds": wait_s}


def too_many_evaluations(wait_s: int) -> HttpResponse:
    """Return the 429 answer of a page whose evaluation the limit refused."""
    response = HttpResponse(
        too_many_evaluations_message(wait_s),
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(wait_s)
    return response


def evaluation_throttled(view_method: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Decorate a page view's method that evaluates plans with the same per-user limit."""

    @wraps(view_method)
    def wrapper(self: Any, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        wait_s = evaluation_wait_s(request, self)
        if wait_s is None:
            return view_method(self, request, *args, **kwargs)
        return too_many_evaluations(wait_s)

    return wrapper
